// Package perses validates the bundle's Perses objects with Perses' own
// code (github.com/perses/perses at the version perses/community-mixins
// builds with): go test in this directory, from make test-perses.
package perses
