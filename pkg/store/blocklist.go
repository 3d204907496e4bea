package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// BlockedDomain is a blocklist entry: the domain and all its subdomains are never crawled.
type BlockedDomain struct {
	Domain    string
	Reason    string
	CreatedAt time.Time
}

// NormalizeDomain lower-cases a host name, drops a port and a trailing dot, and
// checks that what is left is a DNS name or an IP address.
func NormalizeDomain(host string) (string, error) {
	d := strings.ToLower(strings.TrimSpace(host))
	if h, _, err := net.SplitHostPort(d); err == nil {
		d = h
	}
	d = strings.TrimSuffix(strings.Trim(d, "[]"), ".")
	if d == "" || len(d) > maxDomainLen {
		return "", invalid("domain", "%q must be 1..%d characters", host, maxDomainLen)
	}
	if net.ParseIP(d) != nil {
		return d, nil
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", invalid("domain", "%q has an empty, too long or hyphen-edged label", host)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", invalid("domain", "%q contains %q; use the ASCII (punycode) form", host, r)
			}
		}
	}
	return d, nil
}

// BlockDomain adds (or updates the reason of) a blocklist entry.
func (s *Store) BlockDomain(ctx context.Context, domain, reason string) (BlockedDomain, error) {
	d, err := NormalizeDomain(domain)
	if err != nil {
		return BlockedDomain{}, fmt.Errorf("block domain: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO blocklist (domain, reason, created_at) VALUES (?, ?, UTC_TIMESTAMP(6))
		ON DUPLICATE KEY UPDATE reason = VALUES(reason)`, d, truncate(reason, 512)); err != nil {
		return BlockedDomain{}, fmt.Errorf("block domain %s: %w", d, err)
	}
	var b BlockedDomain
	if err := s.db.QueryRowContext(ctx, "SELECT domain, reason, created_at FROM blocklist WHERE domain = ?", d).
		Scan(&b.Domain, &b.Reason, &b.CreatedAt); err != nil {
		return BlockedDomain{}, fmt.Errorf("block domain %s: %w", d, err)
	}
	return b, nil
}

// UnblockDomain removes an entry; ErrNotFound when it is not listed.
func (s *Store) UnblockDomain(ctx context.Context, domain string) error {
	d, err := NormalizeDomain(domain)
	if err != nil {
		return fmt.Errorf("unblock domain: %w", err)
	}
	r, err := s.db.ExecContext(ctx, "DELETE FROM blocklist WHERE domain = ?", d)
	if err != nil {
		return fmt.Errorf("unblock domain %s: %w", d, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("unblock domain %s: %w", d, ErrNotFound)
	}
	return nil
}

// BlockedDomains lists the blocklist in domain order.
func (s *Store) BlockedDomains(ctx context.Context) ([]BlockedDomain, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT domain, reason, created_at FROM blocklist ORDER BY domain")
	if err != nil {
		return nil, fmt.Errorf("list blocklist: %w", err)
	}
	defer rows.Close()
	var out []BlockedDomain
	for rows.Next() {
		var b BlockedDomain
		if err := rows.Scan(&b.Domain, &b.Reason, &b.CreatedAt); err != nil {
			return nil, fmt.Errorf("list blocklist: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list blocklist: %w", err)
	}
	return out, nil
}

// IsBlocked reports whether host or one of its parent domains is blocklisted, and
// which entry matched.
func (s *Store) IsBlocked(ctx context.Context, host string) (bool, string, error) {
	d, err := NormalizeDomain(host)
	if err != nil {
		return false, "", fmt.Errorf("check blocklist: %w", err)
	}
	candidates := []any{d}
	if net.ParseIP(d) == nil {
		for rest := d; ; {
			i := strings.IndexByte(rest, '.')
			if i < 0 {
				break
			}
			rest = rest[i+1:]
			candidates = append(candidates, rest)
		}
	}
	var match string
	err = s.db.QueryRowContext(ctx, "SELECT domain FROM blocklist WHERE domain IN ("+placeholders(len(candidates))+
		") ORDER BY LENGTH(domain) DESC LIMIT 1", candidates...).Scan(&match)
	if errors.Is(err, sql.ErrNoRows) {
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("check blocklist for %s: %w", d, err)
	}
	return true, match, nil
}
