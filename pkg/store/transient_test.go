package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "connection refused"}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"dial refused", fmt.Errorf("claim urls: %w", refused), true},
		{"errno refused", fmt.Errorf("x: %w", syscall.ECONNREFUSED), true},
		{"bad connection", fmt.Errorf("commit: %w", driver.ErrBadConn), true},
		{"invalid connection", fmt.Errorf("begin: %w", mysql.ErrInvalidConn), true},
		{"server gone", &mysql.MySQLError{Number: 2006}, true},
		{"shutdown", &mysql.MySQLError{Number: 1053}, true},
		{"deadlock", &mysql.MySQLError{Number: 1213}, true},
		{"not ready", fmt.Errorf("open: %w", ErrNotReady), true},
		{"duplicate key", &mysql.MySQLError{Number: 1062}, false},
		{"data too long", &mysql.MySQLError{Number: 1406}, false},
		{"not found", ErrNotFound, false},
		{"validation", invalid("url", "empty"), false},
		{"caller cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"other", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unavailable(tc.err); got != tc.want {
				t.Errorf("Unavailable(%v): got %v, want %v", tc.err, got, tc.want)
			}
		})
	}
	if !Conflict(&mysql.MySQLError{Number: 1205}) || Conflict(&mysql.MySQLError{Number: 2006}) {
		t.Errorf("Conflict: want lock wait timeout only")
	}
}
