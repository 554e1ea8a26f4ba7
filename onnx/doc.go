// Package onnx reads networks trained elsewhere (PyTorch's
// torch.onnx.export, any ONNX exporter) as models of the ptsghmc contract
// (nn.Model), so that their posterior can be sampled, evaluated and served
// like a network built in Go.
//
// The reader decodes the ModelProto protobuf itself (Decode, with
// google.golang.org/protobuf's protowire; no generated code, no other
// dependency) and reads what a feed-forward classifier needs: the graph's
// nodes, initialisers, input and output. Import checks the graph (one float
// input, a batch of images along the first dimension; one output, the
// logits; operators of Supported) and Network.Model builds it as a Gorgonia
// graph of the ops the graph compiler runs, as nn.ConvNet's LeNet is
// built: Gemm and MatMul are matrix products, Conv is Conv2d (then a
// per-channel BroadcastAdd of its bias), MaxPool is MaxPool2D, and so on.
// The initialisers the layers use become the learnables, in the order the
// nodes first use them, with the prior of nn.PriorConfig (precision times
// the layer's fan-in) and He initial scales; their trained values are the
// model's Weights. A Gemm weight stored transposed (transB, PyTorch's
// nn.Linear) is a learnable [in, out] named with ".T". Constant folding
// of shapes (Shape, Gather, Unsqueeze, Concat feeding a Reshape) runs at
// import, with the batch dimension kept symbolic. A Softmax or LogSoftmax
// making the output is stripped (the logits are its input; the
// likelihood is categorical on them) and the model's Description says so.
//
// Every refusal is an error of one line naming the file and, for a node
// at fault, the node's name and operator.
package onnx
