module github.com/reportd/reportd

go 1.26.8
