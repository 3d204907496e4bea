package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Cookies. Both are HttpOnly and SameSite=Strict: scripts cannot read them and no
// other site's page can send them along.
const (
	csrfCookie    = "kgs_csrf"
	sessionCookie = "kgs_session"
	sessionTTL    = 12 * time.Hour
	csrfKey       = "web.csrf" // the token issued during this request
)

func (w *Web) mac(parts ...string) string {
	m := hmac.New(sha256.New, w.secret)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(m.Sum(nil))
}

func setCookie(c *gin.Context, name, value string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, //nolint:gosec // G124: Secure follows the browser's scheme (the service may serve plain HTTP on loopback); HttpOnly and SameSite are set below
		HttpOnly: true, Secure: viaHTTPS(c.Request), SameSite: http.SameSiteStrictMode})
}

// viaHTTPS reports whether the browser reached this server over HTTPS: the
// request came over TLS, or a reverse proxy that terminates TLS (SECURITY.md's
// deployment) says so in X-Forwarded-Proto or Forwarded. Behind such a proxy the
// request itself is plain HTTP, and cookies made without Secure would also be
// sent, session included, on any plain http:// request the browser makes to the
// host. The header needs no trust: a client that claims HTTPS over plain HTTP
// only makes its own browser refuse the cookies.
func viaHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	if strings.EqualFold(strings.TrimSpace(proto), "https") {
		return true
	}
	first, _, _ := strings.Cut(r.Header.Get("Forwarded"), ",")
	for _, pair := range strings.Split(first, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
		if strings.EqualFold(k, "proto") && strings.EqualFold(strings.Trim(v, `"`), "https") {
			return true
		}
	}
	return false
}

// csrfToken returns the token forms must send back: an HMAC of the browser's CSRF
// cookie, which is set here when the browser has none yet.
func (w *Web) csrfToken(c *gin.Context) string {
	if v, ok := c.Get(csrfKey); ok {
		return v.(string)
	}
	id, err := c.Cookie(csrfCookie)
	if err != nil || len(id) != 32 {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
		setCookie(c, csrfCookie, id, 0)
	}
	tok := w.mac("csrf", id)
	c.Set(csrfKey, tok)
	return tok
}

// checkCSRF accepts a POST whose form token matches the browser's CSRF cookie and
// whose Origin, when sent, is this host.
func (w *Web) checkCSRF(c *gin.Context) bool {
	if o := c.GetHeader("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != c.Request.Host {
			return false
		}
	}
	id, err := c.Cookie(csrfCookie)
	if err != nil || id == "" {
		return false
	}
	want := w.mac("csrf", id)
	return subtle.ConstantTimeCompare([]byte(c.PostForm("csrf")), []byte(want)) == 1
}

// loggedIn reports whether this browser may start, cancel and delete: always when no
// API key is configured, otherwise with a valid session cookie.
func (w *Web) loggedIn(c *gin.Context) bool {
	if len(w.d.APIKeys) == 0 {
		return true
	}
	v, err := c.Cookie(sessionCookie)
	if err != nil {
		return false
	}
	exp, sig, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || time.Now().Unix() > n {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(sig), []byte(w.mac("session", exp))) == 1
}

// reader guards a read page when Deps.PrivateReads and keys are configured: without a
// login it redirects to the login page, which comes back here afterwards.
func (w *Web) reader(h gin.HandlerFunc) gin.HandlerFunc {
	if !w.d.PrivateReads || len(w.d.APIKeys) == 0 {
		return h
	}
	return func(c *gin.Context) {
		if !w.loggedIn(c) {
			c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request.URL.RequestURI()))
			return
		}
		h(c)
	}
}

// jsonReader guards a JSON route of a read page as reader guards the page: the
// same login, but a browser's script (or a program) without it gets a 401 problem
// document, not a redirect to the login page, and no data.
func (w *Web) jsonReader(h gin.HandlerFunc) gin.HandlerFunc {
	if !w.d.PrivateReads || len(w.d.APIKeys) == 0 {
		return h
	}
	return func(c *gin.Context) {
		if !w.loggedIn(c) {
			securityHeaders(c)
			c.Header("Cache-Control", "no-store")
			problem(c, http.StatusUnauthorized, "", "Log in first (/login): this server requires an API key (KGS_API_KEYS) to read its crawls.")
			return
		}
		h(c)
	}
}

// mutating guards a POST that changes something: a valid CSRF token, then a login
// when keys are configured. It renders the refusal and returns false.
func (w *Web) mutating(c *gin.Context) bool {
	if !w.checkCSRF(c) {
		w.fail(c, http.StatusForbidden, "csrf", "This form has expired or did not come from this site. Reload the page and send it again.", formPage(c.Request.URL.Path))
		return false
	}
	if !w.loggedIn(c) {
		back := "/login"
		if next := refererPath(c.Request); next != "" {
			back += "?next=" + url.QueryEscape(next)
		}
		w.fail(c, http.StatusUnauthorized, "", "Log in with an API key first: this server requires one (KGS_API_KEYS) to start or cancel crawls and delete documents.", back)
		return false
	}
	return true
}

// formPage is the page that holds the form a POST to path came from, for the
// link back: a form's own address (/crawls/{id}/cancel, /documents/delete-domain)
// is no page.
func formPage(path string) string {
	switch {
	case strings.HasPrefix(path, "/documents/"):
		return "/documents"
	case strings.HasPrefix(path, "/crawls/") && strings.HasSuffix(path, "/cancel"):
		return strings.TrimSuffix(path, "/cancel")
	}
	return path
}

type loginView struct {
	Next  string
	Error string
	// PrivateReads: searching needs the login too, and the page must not say otherwise.
	PrivateReads bool
	ParamError   *paramError // a URL parameter the page cannot use (next naming another site)
}

// safeNext keeps redirects on this site: a local absolute path only, else the
// crawls page.
func safeNext(s string) string {
	if p, ok := localPath(s); ok {
		return p
	}
	return "/crawls"
}

// localPath reports whether s is a path on this site (not another host, not a
// scheme, not // or /\ which browsers read as a host), and returns it as a
// request URI.
func localPath(s string) (string, bool) {
	u, err := url.Parse(s)
	if s == "" || err != nil || u.Host != "" || u.Scheme != "" {
		return "", false
	}
	s = u.RequestURI()
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") {
		return "", false
	}
	return s, true
}

// refererPath is the page a form was sent from, as a local path, when the
// Referer names this host; "" otherwise.
func refererPath(r *http.Request) string {
	u, err := url.Parse(r.Referer())
	if err != nil || u.Host != r.Host {
		return ""
	}
	p, _ := localPath(u.RequestURI())
	return p
}

// loginQuery is what the login page reads from its URL: next, the page to go
// to after the login.
var loginQuery = pageQuery{Path: "/login", Known: []string{"next"}}

func (w *Web) loginPage(c *gin.Context) {
	v, bad := loginQuery.read(c.Request)
	if len(w.d.APIKeys) == 0 {
		c.Redirect(http.StatusSeeOther, safeNext(v.Get("next")))
		return
	}
	view := loginView{Next: safeNext(v.Get("next")), PrivateReads: w.d.PrivateReads}
	if _, ok := localPath(v.Get("next")); bad == nil && v.Get("next") != "" && !ok {
		bad = loginQuery.bad(v, "next", "next is the page of this site to return to after logging in, a path such as /crawls; after this login you go to the crawls page.")
	}
	if bad != nil {
		view.ParamError = bad
		w.render(c, http.StatusBadRequest, "login", "Log in", "", view)
		return
	}
	w.render(c, http.StatusOK, "login", "Log in", "", view)
}

func (w *Web) login(c *gin.Context) {
	next := safeNext(c.PostForm("next"))
	if len(w.d.APIKeys) == 0 {
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	if !w.checkCSRF(c) {
		w.fail(c, http.StatusForbidden, "csrf", "This form has expired. Reload the login page and try again.", "/login")
		return
	}
	key := c.PostForm("key")
	ok := false
	for _, k := range w.d.APIKeys {
		if subtle.ConstantTimeCompare([]byte(key), []byte(k)) == 1 {
			ok = true
		}
	}
	if !ok {
		w.render(c, http.StatusUnauthorized, "login", "Log in", "", loginView{Next: next, Error: "That key is not accepted.", PrivateReads: w.d.PrivateReads})
		return
	}
	exp := strconv.FormatInt(time.Now().Add(sessionTTL).Unix(), 10)
	setCookie(c, sessionCookie, exp+"."+w.mac("session", exp), int(sessionTTL.Seconds()))
	c.Redirect(http.StatusSeeOther, next)
}

func (w *Web) logout(c *gin.Context) {
	if !w.checkCSRF(c) {
		w.fail(c, http.StatusForbidden, "csrf", "This form has expired. Reload the page and try again.", "/")
		return
	}
	setCookie(c, sessionCookie, "", -1)
	c.Redirect(http.StatusSeeOther, "/")
}
