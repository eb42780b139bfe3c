package collector

import (
	"bytes"
	"fmt"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// encode collects every sample, then sorts, checks and encodes the
// families one at a time, as a registry's Gather and the text encoder
// would, to the same bytes. Gather turns every sample into a const metric
// and protobuf messages first, about 1 KB a series held until the whole
// text is out (55 MB at 10,000 nodes); here a sample is about 150 bytes,
// and the messages exist for messageChunk samples at a time, reused for
// the next part.
func (r *Renderer) encode() ([]byte, error) {
	byFamily := r.collect()
	text := bytes.NewBuffer(make([]byte, 0, r.textSize+r.textSize/8))
	messages := newFamilyMessages(byFamily)
	for _, spec := range r.families {
		samples := byFamily[spec]
		if len(samples) == 0 {
			continue // as Gather, which drops a family without samples
		}
		slices.SortFunc(samples, (*sample).compare)
		if err := unique(spec, samples); err != nil {
			return nil, err
		}
		for from := 0; from < len(samples); from += messageChunk {
			part := samples[from:min(from+messageChunk, len(samples))]
			if err := messages.encode(text, spec, part, from == 0); err != nil {
				return nil, fmt.Errorf("encoding %s: %w", spec.Name, err)
			}
		}
		delete(byFamily, spec) // its samples are garbage from here
	}
	r.textSize = text.Len()
	return text.Bytes(), nil
}

// messageChunk is how many samples are protobuf messages at a time: the
// largest family (node_mcd_state, four a node) would need 16 MB of them
// at 10,000 nodes.
const messageChunk = 1024

// collect runs the collector and sorts its samples by family.
func (r *Renderer) collect() map[*Spec][]*sample {
	ch := make(chan *sample, sampleBuffer)
	go func() {
		defer close(ch)
		r.collector.collect(ch)
	}()
	byFamily := make(map[*Spec][]*sample, len(r.families))
	for s := range ch {
		byFamily[s.spec] = append(byFamily[s.spec], s)
	}
	return byFamily
}

// unique fails on two samples of a family with the same label values
// (sorted, they are neighbours), as Gather does.
func unique(spec *Spec, sorted []*sample) error {
	for i := 1; i < len(sorted); i++ {
		if sorted[i-1].compare(sorted[i]) != 0 {
			continue
		}
		var m dto.Metric
		if err := sorted[i].Write(&m); err != nil {
			return err
		}
		return fmt.Errorf("collected metric %q { %s} was collected before with the same name and label values", spec.Name, &m)
	}
	return nil
}

// familyMessages are the protobuf messages of one family's samples, as
// the text encoder reads them, made once for the largest part of a
// family (messageChunk samples at most) and reused. They point into the samples and the Spec: nothing is copied.
type familyMessages struct {
	metrics   []dto.Metric
	gauges    []dto.Gauge
	labels    []dto.LabelPair
	metricPtr []*dto.Metric
	labelPtr  []*dto.LabelPair
}

func newFamilyMessages(byFamily map[*Spec][]*sample) *familyMessages {
	var metrics, labels int
	for spec, samples := range byFamily {
		n := min(len(samples), messageChunk)
		metrics, labels = max(metrics, n), max(labels, n*len(spec.Labels))
	}
	return &familyMessages{
		metrics: make([]dto.Metric, metrics), gauges: make([]dto.Gauge, metrics), metricPtr: make([]*dto.Metric, metrics),
		labels: make([]dto.LabelPair, labels), labelPtr: make([]*dto.LabelPair, labels),
	}
}

// encode appends the text of samples, spec's family or the part of it
// that follows the first, to text. The text encoder starts every family
// with its HELP and TYPE lines: a part that is not the first leaves out
// HELP and cuts the TYPE line it wrote.
func (m *familyMessages) encode(text *bytes.Buffer, spec *Spec, samples []*sample, first bool) error {
	k := len(spec.byName)
	for i, s := range samples {
		pairs := m.labelPtr[i*k : (i+1)*k : (i+1)*k]
		for j, l := range spec.byName {
			pair := &m.labels[i*k+j]
			pair.Name, pair.Value = &spec.Labels[l], &s.labelValues[l]
			pairs[j] = pair
		}
		g := &m.gauges[i]
		g.Value = &s.value
		metric := &m.metrics[i]
		metric.Label, metric.Gauge = pairs, g
		m.metricPtr[i] = metric
	}
	family := &dto.MetricFamily{Name: &spec.Name, Type: dto.MetricType_GAUGE.Enum(), Metric: m.metricPtr[:len(samples)]}
	if first {
		family.Help = &spec.Help
	}
	start := text.Len()
	if _, err := expfmt.MetricFamilyToText(text, family); err != nil {
		return err
	}
	if first {
		return nil
	}
	typeLine := "# TYPE " + spec.Name + " gauge\n"
	written := text.Bytes()[start:]
	if !bytes.HasPrefix(written, []byte(typeLine)) {
		return fmt.Errorf("the text encoder began a part of the family with %.100q, not its TYPE line", written)
	}
	text.Truncate(start + copy(written, written[len(typeLine):]))
	return nil
}
