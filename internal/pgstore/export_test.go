package pgstore

// LatestSQL exposes Latest's statement to the plan test.
var LatestSQL = latestSQL

// ProjectsSQL exposes Projects' statement to the plan test.
var ProjectsSQL = projectsSQL

const SitesLockKey = sitesLock
