package predictive

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// WriteCSV writes the predictions preds of the posterior p as CSV to w
// (ptsghmc predict's output): a header, then per image its index, the
// predicted class, the class probabilities (columns p<label>), the
// predictive entropy and the mutual information, to 6 significant digits.
func (p *Posterior) WriteCSV(w io.Writer, preds []Prediction) error {
	cw := csv.NewWriter(w)
	head := []string{"index", "predicted"}
	for c := 0; c < p.Model.Outputs; c++ {
		head = append(head, fmt.Sprintf("p%d", p.Label(c)))
	}
	head = append(head, "entropy", "mutual_information")
	cw.Write(head)
	for i, pr := range preds {
		rec := []string{strconv.Itoa(i), strconv.Itoa(pr.Class)}
		for _, v := range pr.Probabilities {
			rec = append(rec, strconv.FormatFloat(v, 'g', 6, 64))
		}
		rec = append(rec, strconv.FormatFloat(pr.Entropy, 'g', 6, 64), strconv.FormatFloat(pr.MutualInformation, 'g', 6, 64))
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
