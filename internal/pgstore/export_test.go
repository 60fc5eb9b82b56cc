package pgstore

// LatestSQL exposes Latest's statement to the plan test.
var LatestSQL = latestSQL

const SitesLockKey = sitesLock
