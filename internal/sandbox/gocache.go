package sandbox

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// goCacheCommand is the hidden first argument with which jlgcli runs, in a
// sandbox, as the go command's build cache (GOCACHEPROG): it reads the
// user's build cache, read-only, and writes the run's own. The standard
// library and whatever the user built before come warm from the user's
// cache, and nothing a confined call builds ever lands in it.
//
//	jlgcli __gocache OWN [USER]
const goCacheCommand = "__gocache"

// The messages of the GOCACHEPROG protocol (go help gocacheprog; the
// go command's cmd/go/internal/cacheprog): one JSON object a line each
// way; a "put" with a body is followed by the body as a JSON string
// (base64).
type goCacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type goCacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// goCache is the cache: own is the run's directory (writable), user the
// user's GOCACHE (read-only; "" for none).
type goCache struct{ own, user string }

// serveGoCache answers the go command on in and out until it closes.
func serveGoCache(args []string, in io.Reader, out io.Writer) int {
	if len(args) < 1 || !filepath.IsAbs(args[0]) {
		fmt.Fprintln(os.Stderr, "usage: jlgcli "+goCacheCommand+" OWN [USER]")
		return 2
	}
	c := goCache{own: args[0]}
	if len(args) > 1 {
		c.user = args[1]
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r goCacheResponse) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(goCacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return 1
	}
	dec := json.NewDecoder(bufio.NewReader(in))
	for {
		var req goCacheRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "jlgcli gocache:", err)
			return 1
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				fmt.Fprintln(os.Stderr, "jlgcli gocache: the body of a put:", err)
				return 1
			}
		}
		resp := goCacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			c.get(req, &resp)
		case "put":
			c.put(req, body, &resp)
		case "close":
			_ = send(resp)
			return 0
		default:
			resp.Err = "unknown command " + strconv.Quote(req.Command)
		}
		if err := send(resp); err != nil {
			return 1
		}
	}
}

// The run's own entries: a/<action> holds "<output hex> <size> <unix ns>",
// o/<output> the body.
func (c goCache) get(req goCacheRequest, resp *goCacheResponse) {
	if e, err := os.ReadFile(filepath.Join(c.own, "a", hex.EncodeToString(req.ActionID))); err == nil {
		if f := strings.Fields(string(e)); len(f) == 3 {
			out, err1 := hex.DecodeString(f[0])
			size, err2 := strconv.ParseInt(f[1], 10, 64)
			ns, err3 := strconv.ParseInt(f[2], 10, 64)
			path := filepath.Join(c.own, "o", f[0])
			if fi, err := os.Stat(path); err1 == nil && err2 == nil && err3 == nil && err == nil && fi.Mode().IsRegular() && fi.Size() == size {
				t := time.Unix(0, ns)
				resp.OutputID, resp.Size, resp.Time, resp.DiskPath = out, size, &t, path
				return
			}
		}
	}
	if out, size, t, path, ok := userEntry(c.user, req.ActionID); ok {
		resp.OutputID, resp.Size, resp.Time, resp.DiskPath = out, size, &t, path
		return
	}
	resp.Miss = true
}

func (c goCache) put(req goCacheRequest, body []byte, resp *goCacheResponse) {
	if int64(len(body)) != req.BodySize {
		resp.Err = fmt.Sprintf("put: a body of %d bytes, announced %d", len(body), req.BodySize)
		return
	}
	out := hex.EncodeToString(req.OutputID)
	path := filepath.Join(c.own, "o", out)
	if err := writeNew(path, body); err != nil {
		resp.Err = err.Error()
		return
	}
	entry := fmt.Sprintf("%s %d %d\n", out, len(body), time.Now().UnixNano())
	if err := writeNew(filepath.Join(c.own, "a", hex.EncodeToString(req.ActionID)), []byte(entry)); err != nil {
		resp.Err = err.Error()
		return
	}
	resp.DiskPath = path
}

// writeNew writes data to path through a temporary file renamed over it.
func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// userEntry reads the entry of action in the go command's own cache
// directory dir, as the go command writes it (<xx>/<action>-a: "v1 <action>
// <output> <size> <unix ns>"; the body in <yy>/<output>-d); ok is false
// when there is none, or it is not a plain file of the size it says.
func userEntry(dir string, action []byte) (out []byte, size int64, t time.Time, path string, ok bool) {
	if dir == "" || len(action) == 0 {
		return
	}
	id := hex.EncodeToString(action)
	e, err := os.ReadFile(filepath.Join(dir, id[:2], id+"-a"))
	if err != nil {
		return
	}
	f := strings.Fields(string(e))
	if len(f) != 5 || f[0] != "v1" || f[1] != id {
		return
	}
	out, err = hex.DecodeString(f[2])
	if err != nil || len(out) == 0 {
		return
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	ns, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	path = filepath.Join(dir, f[2][:2], f[2]+"-d")
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return
	}
	return out, size, time.Unix(0, ns), path, true
}

// userGoCache is the user's Go build cache: GOCACHE, else the go command's
// default (XDG_CACHE_HOME/go-build, else ~/.cache/go-build).
func userGoCache(env []string, home string) string {
	if d := lookup(env, "GOCACHE"); d != "" && d != "off" {
		return d
	}
	if d := lookup(env, "XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "go-build")
	}
	return filepath.Join(home, ".cache", "go-build")
}
