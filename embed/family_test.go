package embed

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/onnxpb"
)

func weights(name string, vals []float32, dims ...int64) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: dims, RawData: raw}
}

// tensorInfo is a graph input or output: its element type and axes (0: a symbolic one).
func tensorInfo(name string, elem onnxpb.TensorProto_DataType, dims ...int64) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for i, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}}
		if d == 0 {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: []string{"batch", "sequence"}[i]}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: shape}}}}
}

func op(kind string, in []string, out string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(kind), Name: proto.String(out), Input: in, Output: []string{out}, Attribute: attrs}
}

const famVocab, famHidden = 5000, 8

// famWord is the toy families' word embedding: token id, dimension k.
func famWord(id, k int) float32 { return float32(math.Sin(float64(id*(k+1)) / 7)) }

// bertShaped is a BERT-shaped export: input_ids, attention_mask and token_type_ids in; a
// word and a token-type embedding summed as last_hidden_state, and their mean as
// pooler_output, out (or, as a sequence classifier, that mean times a column as logits).
func bertShaped(classifier bool) []byte {
	word := make([]float32, famVocab*famHidden)
	for id := range famVocab {
		for k := range famHidden {
			word[id*famHidden+k] = famWord(id, k)
		}
	}
	types := make([]float32, 2*famHidden)
	for k := range famHidden {
		types[famHidden+k] = 100 // a second segment would show
	}
	col := make([]float32, famHidden)
	for k := range col {
		col[k] = float32(k + 1)
	}
	i64, f32 := onnxpb.TensorProto_INT64, onnxpb.TensorProto_FLOAT
	axes := &onnxpb.AttributeProto{Name: proto.String("axes"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{1}}
	keep := &onnxpb.AttributeProto{Name: proto.String("keepdims"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(0)}
	g := &onnxpb.GraphProto{Name: proto.String("family"),
		Initializer: []*onnxpb.TensorProto{weights("word", word, famVocab, famHidden), weights("types", types, 2, famHidden), weights("col", col, famHidden, 1)},
		Input: []*onnxpb.ValueInfoProto{tensorInfo("input_ids", i64, 0, 0), tensorInfo("attention_mask", i64, 0, 0),
			tensorInfo("token_type_ids", i64, 0, 0)},
		Node: []*onnxpb.NodeProto{op("Gather", []string{"word", "input_ids"}, "w"), op("Gather", []string{"types", "token_type_ids"}, "t"),
			op("Add", []string{"w", "t"}, "last_hidden_state"), op("ReduceMean", []string{"last_hidden_state"}, "pooler_output", axes, keep)},
		Output: []*onnxpb.ValueInfoProto{tensorInfo("last_hidden_state", f32, 0, 0, famHidden), tensorInfo("pooler_output", f32, 0, famHidden)},
	}
	if classifier {
		g.Node = append(g.Node, op("MatMul", []string{"pooler_output", "col"}, "logits"))
		g.Output = []*onnxpb.ValueInfoProto{tensorInfo("logits", f32, 0, 1)}
	}
	b, _ := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}}})
	return b
}

// TestEncoderLayoutsOfTheCommonFamilies: a BERT-shaped sentence-transformers export (the
// graph under onnx/, token_type_ids fed, two outputs of which last_hidden_state is pooled,
// CLS pooling) embeds as its graph says, and a BERT sequence classifier with one label scores
// a pair as its graph says.
func TestEncoderLayoutsOfTheCommonFamilies(t *testing.T) {
	tok, err := os.ReadFile(filepath.Join("..", "models", "pii", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"bert/config.json":           {Data: []byte(`{"architectures":["BertModel"],"model_type":"bert","max_position_embeddings":64,"vocab_size":5000,"pad_token_id":0}`)},
		"bert/tokenizer.json":        {Data: tok},
		"bert/onnx/model.onnx":       {Data: bertShaped(false)},
		"bert/modules.json":          {Data: []byte(`[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`)},
		"bert/1_Pooling/config.json": {Data: []byte(`{"word_embedding_dimension":8,"pooling_mode_cls_token":true,"pooling_mode_mean_tokens":false}`)},
		"ce/config.json":             {Data: []byte(`{"architectures":["BertForSequenceClassification"],"model_type":"bert","max_position_embeddings":64,"vocab_size":5000,"type_vocab_size":2,"pad_token_id":0,"id2label":{"0":"LABEL_0"}}`)},
		"ce/tokenizer.json":          {Data: tok},
		"ce/model.onnx":              {Data: bertShaped(true)},
	}
	fsys["pooled/config.json"] = fsys["bert/config.json"]
	fsys["pooled/tokenizer.json"] = fsys["bert/tokenizer.json"]
	fsys["pooled/model.onnx"] = &fstest.MapFile{Data: bertShaped(true)}
	fsys["pooled/modules.json"] = fsys["bert/modules.json"]
	fsys["pooled/1_Pooling/config.json"] = &fstest.MapFile{Data: []byte(`{"word_embedding_dimension":1,"pooling_mode_mean_tokens":true}`)}
	m, err := models.Load(fsys, "bert")
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t)
	sess, err := rt.NewSession(m.Name, m.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEmbedder("family", m, sess, batchConfig(), clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	e = started(t, e)
	vecs, _, err := e.Embed(context.Background(), admission.Interactive, []string{"Allergy: penicillin", "BP"}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := m.Tokenizer.Template()
	for k, v := range vecs[1] {
		if want := famWord(int(prefix[0]), k); math.Abs(float64(v-want)) > 1e-6 {
			t.Fatalf("dimension %d: %v, want the CLS token's %v", k, v, want)
		}
	}
	// An "embedder" whose graph gives one row a sequence is refused at warm-up.
	pm, err := models.Load(fsys, "pooled")
	if err != nil {
		t.Fatal(err)
	}
	psess, err := rt.NewSession(pm.Name, pm.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	if pe, err := NewEmbedder("pooled", pm, psess, batchConfig(), clock.Real(), nil); err != nil || pe.Warm(context.Background()) == nil {
		t.Fatalf("an embedder of one row a sequence was taken (%v)", err)
	}
	ce, err := models.Load(fsys, "ce")
	if err != nil {
		t.Fatal(err)
	}
	csess, err := rt.NewSession(ce.Name, ce.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReranker("family-ce", ce, csess, batchConfig(), clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = started(t, r)
	scores, _, err := r.Score(context.Background(), admission.Interactive, "BP", []string{"Allergy"}, false)
	if err != nil {
		t.Fatal(err)
	}
	// The passage and the [SEP] after it are the second segment, as BERT's tokenizer types a
	// pair: their type embedding (100 in every dimension) is in the score.
	row, typ, _ := r.pairRow(r.tok.Encode("BP", false).IDs, r.tok.Encode("Allergy", false).IDs, false)
	second := 0
	for _, ty := range typ {
		second += int(ty)
	}
	if second != len(r.tok.Encode("Allergy", false).IDs)+1 {
		t.Fatalf("types %v of %v: the passage and its [SEP] are the second segment", typ, row)
	}
	var want float64
	for k := range famHidden {
		var mean float64
		for j, id := range row {
			mean += float64(famWord(int(id), k)) + 100*float64(typ[j])
		}
		want += mean / float64(len(row)) * float64(k+1)
	}
	if math.Abs(float64(scores[0])-want) > 1e-4 {
		t.Fatalf("score %v, want %v", scores[0], want)
	}
}
