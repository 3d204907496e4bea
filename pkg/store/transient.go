package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// MariaDB and client error numbers that say the server is gone or busy
// rather than that the statement is wrong.
const (
	erLockWaitTimeout  = 1205 // lock wait timeout exceeded
	erLockDeadlock     = 1213 // deadlock found
	erConCount         = 1040 // too many connections
	erServerShutdown   = 1053 // server shutdown in progress
	erConnectionKilled = 1927 // connection was killed
	crConnectionError  = 2002
	crConnHostError    = 2003
	crServerGone       = 2006
	crServerLost       = 2013
	erNoReferencedRow  = 1452 // foreign key: parent row missing
	erDupEntry         = 1062 // duplicate entry for a unique key
)

// Conflict reports an InnoDB deadlock or lock wait timeout: the statement
// did nothing and may simply be run again.
func Conflict(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == erLockDeadlock || me.Number == erLockWaitTimeout)
}

// Unavailable reports an error that says MariaDB could not be reached or
// dropped the connection (refused, reset, timed out, server gone, shutting
// down, too many connections), or a Conflict: the work may succeed when tried
// again later, unlike a constraint or validation error. A cancelled caller's
// context is not counted as unavailability.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrNotReady) || Conflict(err) {
		return true
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erConCount, erServerShutdown, erConnectionKilled, crConnectionError, crConnHostError, crServerGone, crServerLost:
			return true
		}
	}
	return false
}
