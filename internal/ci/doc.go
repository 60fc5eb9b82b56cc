// Package ci holds the tests of the CI one-liners (issue 23): the GitHub
// composite action (action.yml) and the GitLab CI/CD component
// (templates/publish.yml) run as their runners would, against a real
// reportd on loopback that serves reportctl at /dl/.
package ci
