package handlers

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"akk/api"
	"akk/domain"
)

var param = regexp.MustCompile(`\{[a-z_]+\}`)

// TestEveryActionHasARoute proves every action the domain offers maps to a
// route of the contract, and no route is mapped that the domain never offers.
func TestEveryActionHasARoute(t *testing.T) {
	spec, err := openapi3.NewLoader().LoadFromData(api.Spec)
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for p, item := range spec.Paths.Map() {
		for m := range item.Operations() {
			routes[strings.ToUpper(m)+" "+param.ReplaceAllString(p, "{}")] = true
		}
	}
	for on, names := range domain.ActionKinds {
		for _, name := range names {
			method, path, ok := actionRoute(domain.Action{Name: name, On: on, ID: "{}"})
			if !ok {
				t.Errorf("%s on %s has no route", name, on)
				continue
			}
			if !routes[method+" "+path] {
				t.Errorf("%s on %s: %s %s is not a route of the contract", name, on, method, path)
			}
		}
	}
	for on, routes := range actionRoutes {
		for name := range routes {
			found := false
			for _, n := range domain.ActionKinds[on] {
				found = found || n == name
			}
			if !found {
				t.Errorf("a route for %s on %s, which the domain never offers", name, on)
			}
		}
	}
}

// TestGuidesTakeTheDomainsNumbers: a tool guide that names a time limit
// says the domain's constant.
func TestGuidesTakeTheDomainsNumbers(t *testing.T) {
	want := map[string]string{"akk_model_options": span(domain.ModelCatalogTTL), "akk_identify_foreground": span(domain.ForegroundProofTTL)}
	for _, tool := range mcpCatalogue {
		if w, ok := want[tool.Name]; ok && !strings.Contains(tool.Guide, w) {
			t.Errorf("%s's guide does not say %s: %s", tool.Name, w, tool.Guide)
		}
	}
	if span(5*time.Minute) != "5 minutes" || span(30*time.Second) != "30 s" || span(time.Minute) != "1 minute" {
		t.Errorf("span: %s, %s, %s", span(5*time.Minute), span(30*time.Second), span(time.Minute))
	}
}
