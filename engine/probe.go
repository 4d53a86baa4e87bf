package engine

// The device probe needs some model to open a session with. Rather than ship a binary file for
// it, probeModel writes the smallest useful ONNX model by hand: y = Identity(x) on a float
// tensor of shape [1]. Field numbers are those of onnx.proto.

const (
	probeInput  = "x"
	probeOutput = "y"
)

func probeModel() []byte {
	valueInfo := func(name string) []byte {
		dim := varintField(1, 1)                                    // Dimension.dim_value
		shape := bytesField(1, dim)                                 // TensorShapeProto.dim
		tensor := cat(varintField(1, 1), bytesField(2, shape))      // elem_type FLOAT, shape
		typ := bytesField(1, tensor)                                // TypeProto.tensor_type
		return cat(bytesField(1, []byte(name)), bytesField(2, typ)) // ValueInfoProto name, type
	}
	node := cat( // NodeProto input, output, op_type
		bytesField(1, []byte(probeInput)),
		bytesField(2, []byte(probeOutput)),
		bytesField(4, []byte("Identity")))
	graph := cat( // GraphProto node, name, input, output
		bytesField(1, node),
		bytesField(2, []byte("sluice_device_probe")),
		bytesField(11, valueInfo(probeInput)),
		bytesField(12, valueInfo(probeOutput)))
	opset := varintField(2, 13) // OperatorSetIdProto.version, default domain
	return cat(                 // ModelProto ir_version, graph, opset_import
		varintField(1, 7),
		bytesField(7, graph),
		bytesField(8, opset))
}

func bytesField(num uint64, payload []byte) []byte {
	return cat(varint(num<<3|2), varint(uint64(len(payload))), payload)
}

func varintField(num, v uint64) []byte { return cat(varint(num<<3), varint(v)) }

func varint(v uint64) []byte {
	var out []byte
	for v >= 0x80 {
		out = append(out, byte(v)|0x80)
		v >>= 7
	}
	return append(out, byte(v))
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
