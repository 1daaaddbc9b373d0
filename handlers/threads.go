package handlers

import "context"

// ListThreads lists a pane's native threads from the agent's records.
func (s *Server) ListThreads(ctx context.Context, req ListThreadsRequestObject) (ListThreadsResponseObject, error) {
	l, err := s.Service.Threads(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	out := ListThreads200JSONResponse{TerminalId: l.TerminalID, Project: l.Project, SnapshotId: l.SnapshotID,
		ExpiresAt: l.ExpiresAt, Agent: agentOut(l.Agent), Threads: []NativeThread{}}
	for _, t := range l.Threads {
		out.Threads = append(out.Threads, NativeThread{NativeThreadId: t.NativeThreadID, Title: t.Title, UpdatedAt: t.UpdatedAt,
			Current: t.Current, Number: t.Number, ShortId: t.ShortID})
	}
	return out, nil
}
