// Command native-reference is the reference the package's protobuf exposition and native-histogram
// tests compare with: the real client_golang and client_model, not an imitation of them.
//
//	native-reference          reads one case {factor, zeroThreshold, maxBuckets, values} (or a JSON
//	                          array of them) from stdin, observes the values into a client_golang
//	                          histogram with those native-histogram options and prints what its
//	                          Write produces, a dto.Metric as protojson (an array for an array).
//	native-reference decode   reads a delimited protobuf exposition body from stdin with
//	                          prometheus/common's expfmt decoder and prints its MetricFamilies as
//	                          a JSON array of protojson.
//	native-reference scrape   reads the same body with the parser Prometheus scrapes it with
//	                          (model/textparse's ProtobufParser, native histograms on, classic
//	                          histograms only as series where there is no native one) and prints
//	                          what it reads: a JSON array of {kind: "series", labels, value} and
//	                          {kind: "histogram", labels, schema, zeroThreshold, zeroCount, count,
//	                          sum, positiveSpans, positiveDeltas, negativeSpans, negativeDeltas},
//	                          floats as numbers or "NaN", "+Inf", "-Inf".
//
// Values are JSON numbers or the strings "NaN", "+Inf", "-Inf" and "-0". An absent zeroThreshold
// is client_golang's default (2^-128); 0 is a zero bucket of width zero.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"google.golang.org/protobuf/encoding/protojson"
)

type observationCase struct {
	Factor        float64           `json:"factor"`
	ZeroThreshold *float64          `json:"zeroThreshold"`
	MaxBuckets    uint32            `json:"maxBuckets"`
	Values        []json.RawMessage `json:"values"`
}

func main() {
	var err error
	switch {
	case len(os.Args) == 1:
		err = observe(os.Stdin, os.Stdout)
	case len(os.Args) == 2 && os.Args[1] == "decode":
		err = decode(os.Stdin, os.Stdout)
	case len(os.Args) == 2 && os.Args[1] == "scrape":
		err = scrape(os.Stdin, os.Stdout)
	default:
		err = errors.New("usage: native-reference [decode|scrape] < input")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "native-reference:", err)
		os.Exit(1)
	}
}

func parseValue(raw json.RawMessage) (float64, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		switch text {
		case "NaN":
			return math.NaN(), nil
		case "+Inf":
			return math.Inf(1), nil
		case "-Inf":
			return math.Inf(-1), nil
		case "-0":
			return math.Copysign(0, -1), nil
		}
		return 0, fmt.Errorf("value %q is not a number, NaN, +Inf, -Inf or -0", text)
	}
	return strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
}

func run(c observationCase) (json.RawMessage, error) {
	opts := prometheus.HistogramOpts{
		Name:                            "reference",
		Help:                            "The reference histogram.",
		Buckets:                         []float64{0.1, 1, 10},
		NativeHistogramBucketFactor:     c.Factor,
		NativeHistogramMaxBucketNumber:  c.MaxBuckets,
		NativeHistogramMinResetDuration: 0,
		NativeHistogramMaxZeroThreshold: 0,
	}
	if c.ZeroThreshold != nil {
		opts.NativeHistogramZeroThreshold = *c.ZeroThreshold
		if *c.ZeroThreshold == 0 {
			opts.NativeHistogramZeroThreshold = prometheus.NativeHistogramZeroThresholdZero
		}
	}
	h := prometheus.NewHistogram(opts)
	for _, raw := range c.Values {
		v, err := parseValue(raw)
		if err != nil {
			return nil, err
		}
		h.Observe(v)
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		return nil, err
	}
	return protojson.Marshal(&m)
}

func observe(in io.Reader, out io.Writer) error {
	input, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	input = bytes.TrimSpace(input)
	var cases []observationCase
	single := len(input) > 0 && input[0] == '{'
	if single {
		cases = make([]observationCase, 1)
		err = json.Unmarshal(input, &cases[0])
	} else {
		err = json.Unmarshal(input, &cases)
	}
	if err != nil {
		return err
	}
	results := make([]json.RawMessage, len(cases))
	for i, c := range cases {
		if results[i], err = run(c); err != nil {
			return fmt.Errorf("case %d: %w", i, err)
		}
	}
	if single {
		_, err = fmt.Fprintf(out, "%s\n", results[0])
		return err
	}
	return json.NewEncoder(out).Encode(results)
}

func decode(in io.Reader, out io.Writer) error {
	decoder := expfmt.NewDecoder(in, expfmt.NewFormat(expfmt.TypeProtoDelim))
	families := []json.RawMessage{}
	for {
		var family dto.MetricFamily
		if err := decoder.Decode(&family); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("family %d: %w", len(families), err)
		}
		text, err := protojson.Marshal(&family)
		if err != nil {
			return err
		}
		families = append(families, text)
	}
	return json.NewEncoder(out).Encode(families)
}

// jsonFloat is a float64 that JSON can carry: a number, or "NaN", "+Inf", "-Inf".
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v)
}

type scrapedSpan struct {
	Offset int32  `json:"offset"`
	Length uint32 `json:"length"`
}

type scraped struct {
	Kind           string        `json:"kind"`
	Labels         string        `json:"labels"`
	Value          *jsonFloat    `json:"value,omitempty"`
	Schema         *int32        `json:"schema,omitempty"`
	ZeroThreshold  *jsonFloat    `json:"zeroThreshold,omitempty"`
	ZeroCount      uint64        `json:"zeroCount,omitempty"`
	Count          uint64        `json:"count,omitempty"`
	Sum            *jsonFloat    `json:"sum,omitempty"`
	PositiveSpans  []scrapedSpan `json:"positiveSpans,omitempty"`
	PositiveDeltas []int64       `json:"positiveDeltas,omitempty"`
	NegativeSpans  []scrapedSpan `json:"negativeSpans,omitempty"`
	NegativeDeltas []int64       `json:"negativeDeltas,omitempty"`
}

func spans(list []histogram.Span) []scrapedSpan {
	out := make([]scrapedSpan, len(list))
	for i, s := range list {
		out[i] = scrapedSpan{Offset: s.Offset, Length: s.Length}
	}
	return out
}

func scrape(in io.Reader, out io.Writer) error {
	body, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	parser := textparse.NewProtobufParser(body, false, false, false, false, labels.NewSymbolTable())
	entries := []scraped{}
	for {
		entry, err := parser.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var l labels.Labels
		switch entry {
		case textparse.EntrySeries:
			_, _, v := parser.Series()
			parser.Labels(&l)
			value := jsonFloat(v)
			entries = append(entries, scraped{Kind: "series", Labels: l.String(), Value: &value})
		case textparse.EntryHistogram:
			_, _, h, _ := parser.Histogram()
			parser.Labels(&l)
			if h == nil {
				return fmt.Errorf("%s: a float histogram, where integer counts were written", l.String())
			}
			zeroThreshold, sum := jsonFloat(h.ZeroThreshold), jsonFloat(h.Sum)
			entries = append(entries, scraped{
				Kind: "histogram", Labels: l.String(), Schema: &h.Schema, ZeroThreshold: &zeroThreshold,
				ZeroCount: h.ZeroCount, Count: h.Count, Sum: &sum,
				PositiveSpans: spans(h.PositiveSpans), PositiveDeltas: h.PositiveBuckets,
				NegativeSpans: spans(h.NegativeSpans), NegativeDeltas: h.NegativeBuckets,
			})
		}
	}
	return json.NewEncoder(out).Encode(entries)
}
