package handlers

import (
	"context"

	"akk/domain"
)

// NewThread starts a clean native thread in a pane (new-thread, clear-thread).
func (s *Server) NewThread(ctx context.Context, req NewThreadRequestObject) (NewThreadResponseObject, error) {
	r, err := s.Service.NewThread(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	return NewThread200JSONResponse(newThreadOut(r)), nil
}

// ResumeThread resumes one exact native thread in a pane (resume-thread).
func (s *Server) ResumeThread(ctx context.Context, req ResumeThreadRequestObject) (ResumeThreadResponseObject, error) {
	id, prev := "", false
	if req.Body.NativeThreadId != nil {
		id = *req.Body.NativeThreadId
	}
	if req.Body.Previous != nil {
		prev = *req.Body.Previous
	}
	r, err := s.Service.ResumeThread(ctx, req.TerminalId, id, prev)
	if err != nil {
		return nil, err
	}
	return ResumeThread200JSONResponse(newThreadOut(r)), nil
}

func newThreadOut(r domain.NewThreadResult) NewThreadResult {
	return NewThreadResult{TerminalId: r.TerminalID, Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry,
		SessionId: optString(r.SessionID), NativeThreadId: optString(r.NativeThreadID),
		PreviousNativeThreadId: optString(r.PreviousNativeThreadID), Binding: NewThreadResultBinding(r.Binding), Detail: optString(r.Detail)}
}

// InspectTerminal reads the agent's own status view once (native_inspect).
func (s *Server) InspectTerminal(ctx context.Context, req InspectTerminalRequestObject) (InspectTerminalResponseObject, error) {
	r, err := s.Service.Inspect(ctx, req.TerminalId, string(req.Body.Inspection))
	if err != nil {
		return nil, err
	}
	out := InspectTerminal200JSONResponse{TerminalId: r.TerminalID, Inspection: NativeInspectionInspection(domain.InspectionStatus),
		Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry, IdentityMatchesRecord: r.IdentityMatchesRecord,
		Detail: optString(r.Detail)}
	if st := r.Status; st != nil {
		out.Status = &NativeStatus{NativeThreadId: st.NativeThreadID, AgentVersion: st.AgentVersion, Model: st.Model,
			Directory: st.Directory, Permissions: optString(st.Permissions)}
	}
	return out, nil
}

// IdentifyForeground runs the Codex foreground probe (diagnostic only).
func (s *Server) IdentifyForeground(ctx context.Context, req IdentifyForegroundRequestObject) (IdentifyForegroundResponseObject, error) {
	r, err := s.Service.IdentifyForeground(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	return IdentifyForeground200JSONResponse{TerminalId: r.TerminalID, Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry,
		NativeThreadId: optString(r.NativeThreadID), RecordPresent: r.RecordPresent, ProvenAt: r.ProvenAt, ExpiresAt: r.ExpiresAt,
		Authorizes: Nothing, Detail: optString(r.Detail)}, nil
}

// GetPermissions reads a pane's native permission mode (permission_options).
func (s *Server) GetPermissions(ctx context.Context, req GetPermissionsRequestObject) (GetPermissionsResponseObject, error) {
	r, err := s.Service.Permissions(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	return GetPermissions200JSONResponse(permissionsOut(r)), nil
}

// SetPermissions changes a pane's native permission mode (set_permissions).
func (s *Server) SetPermissions(ctx context.Context, req SetPermissionsRequestObject) (SetPermissionsResponseObject, error) {
	r, err := s.Service.SetPermissions(ctx, req.TerminalId, req.Body.Mode)
	if err != nil {
		return nil, err
	}
	return SetPermissions200JSONResponse(permissionsOut(r)), nil
}

func permissionsOut(r domain.PermissionsResult) PermissionsResult {
	out := PermissionsResult{TerminalId: r.TerminalID, Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry,
		Current: optString(r.Current), Previous: optString(r.Previous), AlreadyEffective: r.AlreadyEffective,
		Detail: optString(r.Detail), Modes: []PermissionModeOption{}}
	for _, m := range r.Modes {
		out.Modes = append(out.Modes, PermissionModeOption{Mode: m.Mode, Label: m.Label})
	}
	return out
}

// GetModels reads a pane's model catalogue (model_options).
func (s *Server) GetModels(ctx context.Context, req GetModelsRequestObject) (GetModelsResponseObject, error) {
	r, err := s.Service.Models(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	out := GetModels200JSONResponse{TerminalId: r.TerminalID, Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry,
		Effective: choiceOut(r.Effective), Models: []ModelOption{}, Scope: ModelsResultScope(r.Scope), ExpiresAt: r.ExpiresAt,
		Detail: optString(r.Detail)}
	for _, m := range r.Models {
		e := m.Efforts
		if e == nil {
			e = []string{}
		}
		out.Models = append(out.Models, ModelOption{Model: m.Model, Label: m.Label, ReasoningEfforts: e})
	}
	return out, nil
}

// SetModel sets the effort of the model in effect from the catalogue (set_model).
func (s *Server) SetModel(ctx context.Context, req SetModelRequestObject) (SetModelResponseObject, error) {
	r, err := s.Service.SetModel(ctx, req.TerminalId, req.Body.Model, req.Body.ReasoningEffort)
	if err != nil {
		return nil, err
	}
	out := SetModel200JSONResponse{TerminalId: r.TerminalID, Outcome: ModelSetResultOutcome(r.Outcome), DoNotRetry: r.DoNotRetry,
		Effective: choiceOut(r.Effective), Scope: ModelSetResultScope(r.Scope), Detail: optString(r.Detail)}
	if r.Scope == "current_and_new_sessions" && r.Outcome == "changed" {
		changed := true
		out.DefaultsChanged = &changed
		// Codex keeps the tuple for new sessions, except Ultra, which is
		// effective in this session only; the effort new sessions then get
		// is not shown, so none is claimed.
		if r.Effective != nil && r.Effective.Effort != "ultra" {
			out.NewSessionDefaults = choiceOut(r.Effective)
		}
	}
	return out, nil
}

func choiceOut(c *domain.ModelChoice) *ModelChoice {
	if c == nil {
		return nil
	}
	return &ModelChoice{Model: c.Model, ReasoningEffort: c.Effort}
}

// RepairModelControl clears an exact model-control residue (repair_model_control).
func (s *Server) RepairModelControl(ctx context.Context, req RepairModelControlRequestObject) (RepairModelControlResponseObject, error) {
	r, err := s.Service.RepairModel(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	return RepairModelControl200JSONResponse{TerminalId: r.TerminalID, Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry, Detail: optString(r.Detail)}, nil
}
