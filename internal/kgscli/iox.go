package kgscli

import "io"

// readCloser and writeCloser adapt the command's streams to the MCP transport.
type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
