package evaluate

// ClassResult is one predictor's accuracy and expected calibration error
// on the test examples of one class.
type ClassResult struct {
	Predictor string  `json:"predictor"`
	Class     int     `json:"class"` // the class's label in the data (before a --classes remapping)
	Count     int     `json:"count"` // test examples of the class
	Accuracy  float64 `json:"accuracy"`
	ECE       float64 `json:"ece"` // ECEBins equal-width confidence bins, over the class's examples
}

// perClass scores probs (n rows of k) class by class; classes maps an
// output to its label in the data (nil: the identity).
func perClass(pred string, probs []float64, labels []int, k int, classes []int) []ClassResult {
	byClass := make([][]int, k)
	for i, y := range labels {
		byClass[y] = append(byClass[y], i)
	}
	var out []ClassResult
	for c, idx := range byClass {
		label := c
		if c < len(classes) {
			label = classes[c]
		}
		if len(idx) == 0 { // no test example of the class
			continue
		}
		r := ClassResult{Predictor: pred, Class: label, Count: len(idx)}
		p := make([]float64, 0, len(idx)*k)
		l := make([]int, len(idx))
		for j, i := range idx {
			p = append(p, probs[i*k:(i+1)*k]...)
			l[j] = labels[i]
		}
		m := score(p, l, k) // rows of the class's examples, labels in [0, k)
		r.Accuracy, r.ECE = m.Accuracy, m.ECE
		out = append(out, r)
	}
	return out
}
