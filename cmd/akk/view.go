package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
)

// printResult prints an API answer: its JSON with --json, else one
// "field: value" line per value, nested fields joined with dots, in the
// order akkd sent them (a person's view; ids whole, as commands take them).
func (c *cli) printResult(body []byte) error {
	if c.json {
		return c.printJSON(body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var lines [][2]string
	if err := flatten(dec, "", &lines); err != nil {
		return c.printJSON(body) // not an object: as it is
	}
	tw := tabwriter.NewWriter(c.out, 0, 2, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "%s:\t%s\n", l[0], l[1])
	}
	return tw.Flush()
}

// flatten reads one JSON value from dec into lines under the name prefix.
func flatten(dec *json.Decoder, prefix string, lines *[][2]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name := k.(string)
				if prefix != "" {
					name = prefix + "." + name
				}
				if err := flatten(dec, name, lines); err != nil {
					return err
				}
			}
			_, err = dec.Token() // }
			return err
		case '[':
			var scalars []string
			i := 0
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				if s, ok := scalar(raw); ok {
					scalars = append(scalars, s)
				} else {
					sub := json.NewDecoder(bytes.NewReader(raw))
					sub.UseNumber()
					if err := flatten(sub, fmt.Sprintf("%s[%d]", prefix, i), lines); err != nil {
						return err
					}
				}
				i++
			}
			if len(scalars) > 0 || i == 0 {
				*lines = append(*lines, [2]string{prefix, strings.Join(scalars, ", ")})
			}
			_, err = dec.Token() // ]
			return err
		}
	case nil:
		return nil // absent, for a person
	default:
		*lines = append(*lines, [2]string{prefix, strings.ReplaceAll(fmt.Sprint(t), "\n", " ⏎ ")})
	}
	return nil
}

// scalar is raw as text when it is no object or array.
func scalar(raw json.RawMessage) (string, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "", false
	}
	switch x := v.(type) {
	case map[string]any, []any:
		return "", false
	case nil:
		return "", true
	default:
		return fmt.Sprint(x), true
	}
}
