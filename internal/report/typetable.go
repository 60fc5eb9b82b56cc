package report

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// The type table: one row per file type, read by every layer (content
// rules in sniff, the engine routing in convert, print options, site
// detection, upload checks, serving, the watcher's filter and the CLI's
// help). The OpenAPI FileType enum and the dashboard's types.js are held
// to it by tests (TestTypeTableDrift). docs/architecture.md, "Adding a
// file type", walks through a new row.

// Engine names what turns a type into PDF; convert routes jobs by it.
type Engine string

const (
	EngineChromiumHTML     Engine = "chromium-html"     // printed by Chromium, scripts run
	EngineChromiumMarkdown Engine = "chromium-markdown" // rendered to HTML, printed without script
	EngineOffice           Engine = "office"            // LibreOffice, with the row's Office filters
	EnginePassthroughPDF   Engine = "passthrough-pdf"   // already a PDF: served as stored, trimmed for pageRanges
)

// PrintRule says which print options (PrintOptions) a type takes.
type PrintRule int

const (
	PrintAll        PrintRule = iota // every option, scope=site included
	PrintNoScript                    // every option but the script waits and scope
	PrintPageRanges                  // pageRanges only
	PrintNone                        // none
)

// Container is the file format that holds a binary type's content.
type Container string

const (
	ContainerNone Container = ""     // a format of its own (PDF) or text
	ContainerZip  Container = "zip"  // an Open XML package: a zip with a main part
	ContainerOLE2 Container = "ole2" // an OLE2 compound file (legacy Office)
)

// Office is how LibreOffice loads and exports a type (EngineOffice).
type Office struct {
	Filter  string // import filter, so a file is never opened as something else
	Detect  bool   // a file this filter cannot load may use the filter type detection picks, if it makes a Service
	Service string // document service the file must load as
	Export  string // PDF export filter
}

// TypeInfo is one row of the type table.
type TypeInfo struct {
	Type      FileType
	Exts      []string // lower case, with the dot; the first is the one stored files carry
	MIME      string   // preview and download Content-Type
	Text      bool     // UTF-8 text without NUL bytes; the detail response carries it
	Container Container
	ZipPart   string // ContainerZip: the part every file of the type holds
	Engine    Engine
	Print     PrintRule
	Label     string // short, as the dashboard's badge shows it
	Name      string // what the dashboard calls a file of the type
	Office    Office // EngineOffice only
}

const (
	impress = "com.sun.star.presentation.PresentationDocument"
	// ImpressPDF is Impress's PDF export filter.
	ImpressPDF = "impress_pdf_Export"
)

// seedTypes is the public table, in FileTypes' order.
var seedTypes = []TypeInfo{
	{Type: HTML, Exts: []string{".html"}, MIME: "text/html; charset=utf-8", Text: true,
		Engine: EngineChromiumHTML, Print: PrintAll, Label: "HTML", Name: "HTML page"},
	{Type: MD, Exts: []string{".md"}, MIME: "text/markdown; charset=utf-8", Text: true,
		Engine: EngineChromiumMarkdown, Print: PrintNoScript, Label: "MD", Name: "Markdown document"},
	{Type: PDF, Exts: []string{".pdf"}, MIME: "application/pdf",
		Engine: EnginePassthroughPDF, Print: PrintPageRanges, Label: "PDF", Name: "PDF document"},
	{Type: PPT, Exts: []string{".ppt"}, MIME: "application/vnd.ms-powerpoint", Container: ContainerOLE2,
		Engine: EngineOffice, Print: PrintNone, Label: "PPT", Name: "PowerPoint presentation",
		Office: Office{Filter: "MS PowerPoint 97", Detect: true, Service: impress, Export: ImpressPDF}},
	{Type: PPTX, Exts: []string{".pptx"}, MIME: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
		Container: ContainerZip, ZipPart: "ppt/presentation.xml",
		Engine: EngineOffice, Print: PrintNone, Label: "PPTX", Name: "PowerPoint presentation",
		Office: Office{Filter: "Impress MS PowerPoint 2007 XML", Service: impress, Export: ImpressPDF}},
}

var table atomic.Pointer[[]TypeInfo]

func init() {
	t := append([]TypeInfo(nil), seedTypes...)
	table.Store(&t)
}

// Types returns the table's rows: the public ones in FileTypes' order,
// then any a test registered. The caller must not modify it.
func Types() []TypeInfo { return *table.Load() }

// Lookup returns t's row.
func Lookup(t FileType) (TypeInfo, bool) {
	for _, ti := range Types() {
		if ti.Type == t {
			return ti, true
		}
	}
	return TypeInfo{}, false
}

// Info returns t's row, the zero TypeInfo for a type not in the table.
func (t FileType) Info() TypeInfo { ti, _ := Lookup(t); return ti }

// RegisterType adds a row to the table and returns the function that
// removes it again. It is for tests that prove a new type end to end; a
// public type is a row of seedTypes (and of the OpenAPI enum).
func RegisterType(ti TypeInfo) (remove func()) {
	if ti.Type == "" || len(ti.Exts) == 0 || ti.MIME == "" || ti.Engine == "" {
		panic(fmt.Sprintf("report.RegisterType: incomplete row %+v", ti))
	}
	for {
		old := table.Load()
		if _, dup := Lookup(ti.Type); dup {
			panic("report.RegisterType: type " + string(ti.Type) + " is already in the table")
		}
		next := append(append([]TypeInfo(nil), *old...), ti)
		if table.CompareAndSwap(old, &next) {
			break
		}
	}
	return func() {
		for {
			old := table.Load()
			var next []TypeInfo
			for _, r := range *old {
				if r.Type != ti.Type {
					next = append(next, r)
				}
			}
			if table.CompareAndSwap(old, &next) {
				return
			}
		}
	}
}

// TypeNames lists the table's type names for messages and help:
// TypeNames(", ", " or ") is "html, md, pdf, ppt or pptx".
func TypeNames(sep, last string) string {
	var names []string
	for _, ti := range Types() {
		names = append(names, string(ti.Type))
	}
	return joinLast(names, sep, last)
}

// TypeExts lists the table's extensions: TypeExts(" ", " ") is
// ".html .md .pdf .ppt .pptx".
func TypeExts(sep, last string) string {
	var exts []string
	for _, ti := range Types() {
		exts = append(exts, ti.Exts...)
	}
	return joinLast(exts, sep, last)
}

func joinLast(s []string, sep, last string) string {
	if len(s) < 2 {
		return strings.Join(s, sep)
	}
	return strings.Join(s[:len(s)-1], sep) + last + s[len(s)-1]
}
