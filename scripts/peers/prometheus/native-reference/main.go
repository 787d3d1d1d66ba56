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
	default:
		err = errors.New("usage: native-reference [decode] < input")
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
