package predictive

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"
)

// TestWriteCSV checks predict's CSV: a header naming the classes by label,
// and per image its index, class, probabilities, entropy and mutual
// information as PredictData computed them (6 significant digits).
func TestWriteCSV(t *testing.T) {
	t.Parallel()
	run, test := tinyRun(t, 1, "float32")
	post, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	preds, err := post.PredictData(test)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := post.WriteCSV(&b, preds); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	k := post.Model.Outputs
	if len(recs) != len(preds)+1 || len(recs[0]) != k+4 || recs[0][0] != "index" || recs[0][2] != "p"+strconv.Itoa(post.Label(0)) ||
		recs[0][k+2] != "entropy" || recs[0][k+3] != "mutual_information" {
		t.Fatalf("%d records, header %v", len(recs), recs[0])
	}
	for i, p := range preds {
		r := recs[i+1]
		want := []string{strconv.Itoa(i), strconv.Itoa(p.Class)}
		for _, v := range p.Probabilities {
			want = append(want, strconv.FormatFloat(v, 'g', 6, 64))
		}
		want = append(want, strconv.FormatFloat(p.Entropy, 'g', 6, 64), strconv.FormatFloat(p.MutualInformation, 'g', 6, 64))
		for j := range want {
			if r[j] != want[j] {
				t.Fatalf("image %d: record %v, want %v", i, r, want)
			}
		}
	}
}
