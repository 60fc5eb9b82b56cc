package pgstore

// LatestSQL exposes Latest's statement to the plan test.
var LatestSQL = latestSQL

// HistorySQL exposes History's statement to the plan test.
var HistorySQL = historySQL

// ProjectsSQL exposes Projects' statement to the plan test.
var ProjectsSQL = projectsSQL

const SitesLockKey = sitesLock
