package handlers

import (
	"errors"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"

	"akk/domain"
)

// StructValidator adapts go-playground/validator to the domain Validator
// port, reporting fields by their JSON names.
type StructValidator struct{ v *validator.Validate }

// NewValidator returns the validator the domain uses for its input structs.
func NewValidator() *StructValidator {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			return name
		}
		return toSnake(f.Name)
	})
	return &StructValidator{v: v}
}

// Struct validates s.
func (sv *StructValidator) Struct(s any) []domain.FieldError {
	err := sv.v.Struct(s)
	if err == nil {
		return nil
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return []domain.FieldError{{Field: "", Message: err.Error()}}
	}
	out := make([]domain.FieldError, len(ves))
	for i, fe := range ves {
		msg := "failed " + fe.Tag()
		switch fe.Tag() {
		case "required":
			msg = "is required"
		case "max":
			msg = "must be at most " + fe.Param() + " long"
		case "min":
			msg = "must be at least " + fe.Param() + " long"
		}
		out[i] = domain.FieldError{Field: fe.Field(), Message: msg}
	}
	return out
}

func toSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 && !(i+1 < len(s) && s[i-1] >= 'A' && s[i-1] <= 'Z') {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
