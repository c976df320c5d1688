// Package serve is jlgcli's web board: a local HTTP server over the runs
// of one state directory, with pages that update as the runs' journals are
// written (server-sent events) and a JSON API that mirrors the command
// line's --json objects. Everything it reads and does goes through a
// Source (package runs); its pages and assets are embedded.
package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
)

//go:embed assets
var assets embed.FS

// tokenCookie carries the token a browser presented once.
const tokenCookie = "jlgcli_token"

// Options configure a server.
type Options struct {
	// Token, when set, is asked of every request (Authorization: Bearer,
	// or the cookie that /login sets).
	Token string
	// Poll is how often the runs page's stream looks for changes; 0: 1s.
	Poll time.Duration
}

// Server serves the board of one Source.
type Server struct {
	src   Source
	opt   Options
	pages *pages
	mux   *http.ServeMux
}

// New returns the server of src.
func New(src Source, opt Options) (*Server, error) {
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	s := &Server{src: src, opt: opt, pages: p, mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets/static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /runs/{id}", s.runPage)
	s.mux.HandleFunc("GET /login", s.loginPage)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/runs/{id}", s.apiRun)
	s.mux.HandleFunc("GET /api/runs/{id}/events", s.apiEvents)
	s.mux.HandleFunc("GET /api/runs/{id}/output", s.apiOutput)
	s.mux.HandleFunc("POST /api/runs/{id}/stop", s.apiStop)
	s.mux.HandleFunc("POST /api/runs/{id}/resume", s.apiResume)
	s.mux.HandleFunc("GET /api/changes", s.apiChanges)
	return s, nil
}

// ServeHTTP checks the request's origin and token, then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	if s.opt.Token == "" && !loopbackHost(r.Host) {
		// Without a token the server listens on loopback only: a page
		// that makes the browser ask it under another name (DNS
		// rebinding) gets nothing.
		http.Error(w, "this server answers to its loopback address only", http.StatusMisdirectedRequest)
		return
	}
	if s.opt.Token != "" && r.URL.Path != "/login" && !strings.HasPrefix(r.URL.Path, "/static/") && !s.authorized(r) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="jlgcli"`)
			writeJSON(w, http.StatusUnauthorized, apiError{Error: "a token is needed: Authorization: Bearer TOKEN"})
			return
		}
		http.Redirect(w, r, "/login?next="+urlPath(r), http.StatusSeeOther)
		return
	}
	// Another site's page cannot make the browser stop or resume a run.
	http.NewCrossOriginProtection().Handler(s.mux).ServeHTTP(w, r)
}

// authorized reports whether r carries the token.
func (s *Server) authorized(r *http.Request) bool {
	got := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	} else if c, err := r.Cookie(tokenCookie); err == nil {
		got = c.Value
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opt.Token)) == 1
}

// urlPath is the path (and query) of r, for a redirect back to it.
func urlPath(r *http.Request) string {
	p := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	return p
}

// Token is the token of a server listening on addr: given (--token), else
// the environment's JLGCLI_SERVE_TOKEN (getenv). An address that is not
// loopback without one is a *exit.UsageError saying how to give one.
func Token(addr, given string, getenv func(string) string) (string, error) {
	if given == "" {
		given = getenv("JLGCLI_SERVE_TOKEN")
	}
	if NeedsToken(addr) && given == "" {
		return "", &exit.UsageError{Err: fmt.Errorf("--addr %s is not a loopback address: the board needs a token there", addr),
			Hint: "give one with --token TOKEN or JLGCLI_SERVE_TOKEN, or listen on 127.0.0.1"}
	}
	return given, nil
}

// NeedsToken reports whether a server listening on addr must have a
// token: any address but a loopback one.
func NeedsToken(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return !loopbackHost(host)
}

// loopbackHost reports whether host (with or without a port) is a loopback
// name or address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.pages.render(w, http.StatusOK, "login", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

// login takes the token from the form and keeps it in a cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	token := r.PostFormValue("token")
	next := safeNext(r.PostFormValue("next"))
	if s.opt.Token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.opt.Token)) != 1 {
		s.pages.render(w, http.StatusUnauthorized, "login", loginData{Next: next, Wrong: true})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext is a path on this server to go back to after /login: nothing
// that leads to another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/"
	}
	return next
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fail answers an API error: 404 for a run that is not there, 400 for a
// request the run refuses, 500 otherwise.
func fail(w http.ResponseWriter, err error) {
	writeJSON(w, statusOf(err), apiError{Error: err.Error()})
}

// StatusError gives an error of a Source its HTTP status.
type StatusError struct {
	Code int
	Err  error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

func statusOf(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return http.StatusInternalServerError
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	rows, err := s.src.List(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	rows = filterRows(rows, r.URL.Query().Get("status"), r.URL.Query().Get("kind"))
	writeJSON(w, http.StatusOK, rows)
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.src.Show(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, run.Object())
}

func (s *Server) apiStop(w http.ResponseWriter, r *http.Request)   { s.act(w, r, s.src.Stop) }
func (s *Server) apiResume(w http.ResponseWriter, r *http.Request) { s.act(w, r, s.src.Resume) }

// act stops or resumes a run and says what happened.
func (s *Server) act(w http.ResponseWriter, r *http.Request, do func(context.Context, string) (string, error)) {
	msg, err := do(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
	}{msg})
}

// sender sends one server-sent event.
type sender func(id, event string, data []byte) error

// sse starts an event stream on w; ok is false when w cannot stream.
func sse(w http.ResponseWriter) (send sender, ok bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	return func(id, event string, data []byte) error {
		var b strings.Builder
		if id != "" {
			fmt.Fprintf(&b, "id: %s\n", id)
		}
		if event != "" {
			fmt.Fprintf(&b, "event: %s\n", event)
		}
		for _, line := range strings.Split(string(data), "\n") {
			fmt.Fprintf(&b, "data: %s\n", line)
		}
		b.WriteString("\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}, true
}

// from is where a stream starts: the Last-Event-ID the browser sends when
// it reconnects, else ?from=, else 0.
func from(r *http.Request) int64 {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("from")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// apiEvents streams a run's journal as it is written: each line is an
// event whose id is the offset after it.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, func(id string, send sender) error {
		return s.src.Follow(r.Context(), id, from(r), func(e Event) error {
			return send(strconv.FormatInt(e.Offset, 10), "", e.Line)
		})
	})
}

// apiOutput streams the running attempt's agent output as it grows.
func (s *Server) apiOutput(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, func(id string, send sender) error {
		return s.src.Output(r.Context(), id, from(r), func(c Chunk) error {
			data, _ := json.Marshal(struct {
				Call int    `json:"call"`
				Text string `json:"text"`
			}{c.Call, string(c.Data)})
			return send(strconv.FormatInt(c.Offset, 10), "", data)
		})
	})
}

// stream answers a stream of run {id}'s events, which follow sends; it
// ends with an "end" event (its data: why, when following failed) once
// follow returns, unless the client left.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, follow func(id string, send sender) error) {
	id := r.PathValue("id")
	if _, err := s.src.Show(r.Context(), id); err != nil {
		fail(w, err)
		return
	}
	send, ok := sse(w)
	if !ok {
		return
	}
	err := follow(id, send)
	if r.Context().Err() == nil {
		msg := "ended"
		if err != nil {
			msg = err.Error()
		}
		_ = send("", "end", []byte(msg))
	}
}

// apiChanges streams a "runs" event whenever the list of runs changes
// (a run starts, moves on or ends) or the agent of a running run writes:
// the pages fetch their live part again then.
func (s *Server) apiChanges(w http.ResponseWriter, r *http.Request) {
	send, ok := sse(w)
	if !ok {
		return
	}
	last := ""
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	for {
		if rows, err := s.src.List(r.Context()); err == nil {
			if sum := rowsDigest(r.Context(), s.src, rows); sum != last {
				if last != "" {
					if send("", "runs", []byte(sum[:min(len(sum), 16)])) != nil {
						return
					}
				}
				last = sum
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// ListenAndServe serves the board of src on addr (Serve) until ctx is
// done, once notice is told where, and that the token is needed when
// opt has one. An address it cannot listen on is a *exit.UsageError.
func ListenAndServe(ctx context.Context, addr string, src *Runtime, opt Options, notice func(string)) error {
	h, err := New(src, opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exit.UsageError{Err: fmt.Errorf("--addr: %v", err)}
	}
	url := "http://" + ln.Addr().String() + "/"
	notice(fmt.Sprintf("serving the runs of %s on %s (Ctrl-C stops)", src.Root, url))
	if opt.Token != "" {
		notice(fmt.Sprintf("every request needs the token: a browser gives it once at %slogin; scripts send Authorization: Bearer TOKEN", url))
	}
	return Serve(ctx, ln, h)
}

// Serve serves h on ln until ctx is done, then ends the streams under way
// (their requests' contexts are ctx's) and shuts down.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return nil
}
