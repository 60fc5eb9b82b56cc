// Package sniff holds the one set of rules for what a report's bytes must
// look like for its declared type: the signature, the PDF trailer window,
// the PPTX archive and the text rule. The upload (service), a type change
// (service) and the converter (convert) all ask it, so that what is stored
// is exactly what can be served.
//
// It reads through io.ReaderAt with small buffers and never holds a file
// in memory. It depends on nothing but the domain package report.
package sniff
