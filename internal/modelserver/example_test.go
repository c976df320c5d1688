package modelserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/modelserver"
)

// A script for an agent session: the model writes a file with the client's
// own tool, then answers; a second session meets a rate limit.
func Example() {
	s := modelserver.New(modelserver.Script{
		modelserver.WriteFile("/work/out.txt", "hello\n").WithUsage(modelserver.U(200, 20)),
		modelserver.Text("wrote it\nDONE", modelserver.U(300, 5)),
		modelserver.Fault(429, modelserver.RetryAfter(time.Minute)),
	})
	if err := s.Start(); err != nil {
		panic(err)
	}
	defer s.Close()
	// Point the CLI at s.URL(), e.g. ANTHROPIC_BASE_URL=s.URL(). Here, a
	// request by hand:
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(
		`{"model":"m","tools":[{"name":"Write","input_schema":{"properties":{"file_path":{},"content":{}}}}]}`))
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(b), `"name":"Write"`))
	for _, r := range s.Requests() {
		fmt.Println(r.Method, r.Path, r.Protocol, "turn", r.Turn, "tools", r.Tools)
	}
	fmt.Println("turns left:", s.Remaining())
	// Output:
	// 200 true
	// POST /v1/messages anthropic turn 0 tools [Write]
	// turns left: 2
}
