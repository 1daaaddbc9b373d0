package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"akk/domain"
)

// GetToolCatalogue returns the tools /mcp registers, in order, with a
// version: what a connector registers in its host and compares the host's
// registration with (the capability handshake).
func (s *Server) GetToolCatalogue(ctx context.Context, _ GetToolCatalogueRequestObject) (GetToolCatalogueResponseObject, error) {
	if _, ok := domain.PrincipalFrom(ctx); !ok {
		return nil, domain.E(domain.CodeUnauthorized, "a bearer token is required")
	}
	return GetToolCatalogue200JSONResponse(catalogueOf(s.mcp.tools)), nil
}

// catalogueOf is the catalogue of tools; its version is a digest of all
// of it, so any change to a name, a description, a schema or a hint
// changes it.
func catalogueOf(tools []mcpToolDef) ToolCatalogue {
	out := ToolCatalogue{Tools: make([]CatalogueTool, len(tools))}
	for i, d := range tools {
		out.Tools[i] = CatalogueTool{Name: d.Name, Description: d.description(), InputSchema: d.schema, ReadOnly: d.ReadOnly}
	}
	b, _ := json.Marshal(out.Tools) // maps marshal with sorted keys: stable
	sum := sha256.Sum256(b)
	out.CatalogueVersion = hex.EncodeToString(sum[:8])
	return out
}
