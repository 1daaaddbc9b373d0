package agenttest

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // Codex 0.158.0 and later log to SQLite
)

// codexLogTail is the last n rows Codex logged in its home's log database
// (logs_*.sqlite: Codex 0.158.0 and later log there, not to log/*.log),
// oldest first: the TUI's and the daemon's own account of a failure on a
// machine nobody watches. The TUI's tracing rows are left out.
func codexLogTail(home string, n int) string {
	dbs, _ := filepath.Glob(filepath.Join(home, "logs_*.sqlite"))
	var b strings.Builder
	for _, path := range dbs {
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=2000")
		if err != nil {
			continue
		}
		rows, err := db.Query(`SELECT ts, ts_nanos, level, target, COALESCE(process_uuid, ''), COALESCE(feedback_log_body, '') FROM logs
			WHERE (level IN ('INFO', 'WARN', 'ERROR') AND target != 'feedback_tags')
				OR (target LIKE 'codex_tui%' AND level != 'TRACE') OR target LIKE 'codex_app_server%'
			ORDER BY ts DESC, ts_nanos DESC, id DESC LIMIT ?`, n)
		if err != nil {
			db.Close()
			continue
		}
		var lines []string
		for rows.Next() {
			var ts, nanos int64
			var level, target, proc, body string
			if rows.Scan(&ts, &nanos, &level, &target, &proc, &body) != nil {
				break
			}
			body = strings.ReplaceAll(body, "\n", " ")
			if len(body) > 400 {
				body = body[:400] + "…"
			}
			at := time.Unix(ts, nanos).UTC().Format("15:04:05.000")
			lines = append(lines, fmt.Sprintf("%s %s %s %s %s", at, level, proc, target, body))
		}
		rows.Close()
		db.Close()
		for i := len(lines) - 1; i >= 0; i-- {
			b.WriteString(lines[i])
			b.WriteByte('\n')
		}
	}
	return b.String()
}
