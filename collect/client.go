package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// Encoder makes a credential for a payload.
type Encoder interface {
	Encode(ctx context.Context, payload []byte) (string, error)
}

// ErrRejected means the collector refused the request for good (bad
// credential, not allowed, malformed): retrying the same request is useless.
var ErrRejected = errors.New("collector rejected the request")

// Client calls a collector, or with Socket set the local agent's query
// socket.
type Client struct {
	URL   string // e.g. http://ctl:8642; unused with Socket
	Munge Encoder
	// Socket, when set, is the path of the local query socket
	// (ListenLocal): requests go there, with no munge credential (the
	// server asks the kernel who connected), and URL is not used.
	Socket string
	HTTP   *http.Client
	// PageSize is how many jobs All asks for a request; 0 means MaxPage.
	PageSize int
}

// seriesPage is All's page size when the views carry their time series
// (tens of kilobytes a GPU): answers of a few tens of megabytes.
const seriesPage = 500

// Each calls fn with every job f selects (the caller's own unless an
// admin), in the default order, however many there are: the
// collector answers at most MaxPage a request, so Each asks page after
// page, each after the last job of the one before (keyset paging), and
// holds one page at a time. f's Sort, Asc, Limit and Offset are ignored;
// fn's error stops it.
func (c Client) Each(ctx context.Context, f store.ViewFilter, fn func(store.JobView) error) error {
	size := c.PageSize
	if size <= 0 || size > MaxPage {
		size = MaxPage
		if f.WithSeries {
			size = seriesPage
		}
	}
	f.Sort, f.Asc, f.Limit, f.Offset, f.AfterCluster, f.AfterJobID = "", false, size, 0, "", ""
	for {
		page, err := c.Jobs(ctx, f)
		if err != nil {
			return err
		}
		for _, v := range page {
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(page) < size {
			return nil
		}
		last := page[len(page)-1]
		f.AfterCluster, f.AfterJobID = last.Cluster, last.JobID
	}
}

func (c Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	if c.Socket != "" {
		// A client made for one request: its connection closes with the
		// request, so none is left idle for the agent to evict. Callers
		// that ask more than once set HTTP to LocalHTTP's (NewLocalClient).
		hc := LocalHTTP(c.Socket)
		hc.Transport.(*http.Transport).DisableKeepAlives = true
		return hc
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// LocalHTTP is an HTTP client whose every request goes to the local query
// socket at path, over one kept-alive connection at a time. One of them
// should serve a whole command: a transport per request leaves a
// connection idle behind each, and the agent, holding at most
// LocalOptions.ConnsPerUID of a uid's, would evict them and count each
// as a refusal (conn_limit) on normal use.
func LocalHTTP(path string) *http.Client {
	var d net.Dialer
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
	}}
}

// NewLocalClient is a client of the local query socket at path that
// reuses its connection for every request it makes.
func NewLocalClient(path string) *Client {
	return &Client{Socket: path, HTTP: LocalHTTP(path)}
}

// server names what the client calls, for its errors.
func (c Client) server() string {
	if c.Socket != "" {
		return "agent query socket " + c.Socket
	}
	return "collector"
}

// localURL is the URL of every request to the local query socket: the
// transport dials the socket whatever the host says.
const localURL = "http://gpuprof-agent"

func (c Client) do(ctx context.Context, method, pathQuery string, body []byte) ([]byte, error) {
	base := strings.TrimSuffix(c.URL, "/")
	if c.Socket != "" {
		base = localURL
	}
	req, err := http.NewRequestWithContext(ctx, method, base+pathQuery, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if c.Socket == "" {
		if c.Munge == nil {
			return nil, errors.New("collector client without a munge encoder (set Munge)")
		}
		// Bind to the request URI exactly as it goes on the wire.
		cred, err := c.Munge.Encode(ctx, Binding(method, req.URL.RequestURI(), body))
		if err != nil {
			return nil, fmt.Errorf("munge: %w", err)
		}
		req.Header.Set("Authorization", "MUNGE "+cred)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if c.Socket != "" {
			return nil, fmt.Errorf("%s: %w (is gpuprof agent running on this host?)", c.server(), err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode < 300:
		return out, nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		return nil, fmt.Errorf("%w: %s: %s", ErrRejected, resp.Status, strings.TrimSpace(string(out)))
	}
	return nil, fmt.Errorf("%s: %s: %s", c.server(), resp.Status, strings.TrimSpace(string(out)))
}

// Push sends one profile. It is idempotent: the collector upserts by
// cluster, job and node.
func (c Client) Push(ctx context.Context, j profile.Job) error {
	body, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPost, "/v1/profiles", body)
	return err
}

// Jobs queries one page of job views in f's order (f.Sort, f.Asc); the
// collector limits them to the caller's own unless the caller is an admin,
// and a page to 10,000 jobs.
func (c Client) Jobs(ctx context.Context, f store.ViewFilter) ([]store.JobView, error) {
	pq := "/v1/jobs"
	if q := ViewFilterQuery(f); q != "" {
		pq += "?" + q
	}
	out, err := c.do(ctx, http.MethodGet, pq, nil)
	if err != nil {
		return nil, err
	}
	var views []store.JobView
	if err := json.Unmarshal(out, &views); err != nil {
		return nil, fmt.Errorf("%s answer: %w", c.server(), err)
	}
	return views, nil
}

// Count returns how many jobs f selects (f.Limit and f.Offset are
// ignored); the collector counts only the caller's own unless the caller
// is an admin.
func (c Client) Count(ctx context.Context, f store.ViewFilter) (int, error) {
	f.Limit, f.Offset, f.WithSeries = 0, 0, false
	pq := "/v1/jobs/count"
	if q := ViewFilterQuery(f); q != "" {
		pq += "?" + q
	}
	out, err := c.do(ctx, http.MethodGet, pq, nil)
	if err != nil {
		return 0, err
	}
	var a CountAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		return 0, fmt.Errorf("%s answer: %w", c.server(), err)
	}
	return a.Count, nil
}

func urlEscape(s string) string { return url.QueryEscape(s) }
