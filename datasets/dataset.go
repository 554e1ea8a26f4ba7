package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// DefaultDir is where Debian's dataset-fashion-mnist package installs the
// four Fashion-MNIST IDX files.
const DefaultDir = "/usr/share/datasets/fashion-mnist"

// Dataset is a labelled data set held in memory: N examples of D features
// each, row-major in X, with integer class labels in Labels (classification)
// or real targets in Targets (regression, Outputs values per example).
type Dataset struct {
	N, D    int
	X       []float32 // N*D features
	Classes int       // number of classes; 0 for regression
	Labels  []int     // N labels in [0, Classes) for classification
	Outputs int       // number of regression targets per example
	Targets []float32 // N*Outputs regression targets
	// Image is the dimensions of one example's image as its file gives
	// them (rows, cols[, ...]: an IDX image file's dimensions after the
	// count), so that a model of images can check their shape, not only
	// their D pixels; nil when not known (data not read from a file).
	Image []int
}

// Row returns example i's features (a view into X).
func (d *Dataset) Row(i int) []float32 { return d.X[i*d.D : (i+1)*d.D] }

// Validate checks the data set's internal consistency.
func (d *Dataset) Validate() error {
	if d.N <= 0 || d.D <= 0 {
		return fmt.Errorf("dataset: %d examples of %d features: both must be positive", d.N, d.D)
	}
	if len(d.X) != d.N*d.D {
		return fmt.Errorf("dataset: %d examples of %d features need %d values, have %d", d.N, d.D, d.N*d.D, len(d.X))
	}
	if d.Classes > 0 {
		if len(d.Labels) != d.N {
			return fmt.Errorf("dataset: %d examples, %d labels", d.N, len(d.Labels))
		}
		for i, l := range d.Labels {
			if l < 0 || l >= d.Classes {
				return fmt.Errorf("dataset: label %d of example %d outside [0, %d)", l, i, d.Classes)
			}
		}
		return nil
	}
	if d.Outputs <= 0 || len(d.Targets) != d.N*d.Outputs {
		return fmt.Errorf("dataset: regression needs %d*%d targets, have %d", d.N, d.Outputs, len(d.Targets))
	}
	return nil
}

// Subset returns the examples idx as a new data set (features are copied).
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{N: len(idx), D: d.D, Classes: d.Classes, Outputs: d.Outputs, Image: d.Image}
	s.X = make([]float32, 0, len(idx)*d.D)
	for _, i := range idx {
		s.X = append(s.X, d.Row(i)...)
		if d.Classes > 0 {
			s.Labels = append(s.Labels, d.Labels[i])
		} else {
			s.Targets = append(s.Targets, d.Targets[i*d.Outputs:(i+1)*d.Outputs]...)
		}
	}
	return s
}

// Split shuffles the examples with rng and returns the first n-val of them as
// the training set and the last val as the validation set.
func (d *Dataset) Split(val int, rng *rand.Rand) (train, valid *Dataset, err error) {
	if val < 0 || val >= d.N {
		return nil, nil, fmt.Errorf("split: validation size %d outside [0, %d)", val, d.N)
	}
	perm := rng.Perm(d.N)
	return d.Subset(perm[:d.N-val]), d.Subset(perm[d.N-val:]), nil
}

// Standard IDX file names of MNIST-like data sets.
const (
	TrainImages = "train-images-idx3-ubyte"
	TrainLabels = "train-labels-idx1-ubyte"
	TestImages  = "t10k-images-idx3-ubyte"
	TestLabels  = "t10k-labels-idx1-ubyte"
)

// findIDX returns dir/name, or dir/name.gz when only that exists.
func findIDX(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if _, err := os.Stat(p + ".gz"); err == nil {
		return p + ".gz", nil
	}
	return "", fmt.Errorf("data directory %s: neither %s nor %s.gz exists", dir, name, name)
}

// LoadMNIST reads the training and test sets of an MNIST-like data set from
// dir, which must hold the four standard IDX file names (each optionally
// gzipped), or is one of Names (see Resolve). Pixels are scaled to [0,1];
// there are 10 classes.
func LoadMNIST(dir string) (train, test *Dataset, err error) {
	if dir, err = Resolve(dir); err != nil {
		return nil, nil, err
	}
	load := func(img, lab string) (*Dataset, error) {
		ip, err := findIDX(dir, img)
		if err != nil {
			return nil, err
		}
		lp, err := findIDX(dir, lab)
		if err != nil {
			return nil, err
		}
		return LoadImages(ip, lp, 10)
	}
	if train, err = load(TrainImages, TrainLabels); err != nil {
		return nil, nil, err
	}
	if test, err = load(TestImages, TestLabels); err != nil {
		return nil, nil, err
	}
	if train.D != test.D {
		return nil, nil, fmt.Errorf("data directory %s: training images have %d pixels, test images %d", dir, train.D, test.D)
	}
	return train, test, nil
}

// LoadImages reads an image file (rank >= 2, unsigned bytes) and a label file
// (rank 1) and returns them as a data set with pixels scaled to [0,1].
func LoadImages(imagePath, labelPath string, classes int) (*Dataset, error) {
	img, err := ReadIDXFile(imagePath)
	if err != nil {
		return nil, err
	}
	if len(img.Dims) < 2 {
		return nil, fmt.Errorf("read %s: %w", imagePath, formatErr("image file has rank %d, expected at least 2 (count, rows[, cols])", len(img.Dims)))
	}
	if img.Type != IDXUint8 {
		return nil, fmt.Errorf("read %s: %w", imagePath, formatErr("image element type 0x%02x, expected unsigned byte 0x08", img.Type))
	}
	lab, err := ReadIDXFile(labelPath)
	if err != nil {
		return nil, err
	}
	if len(lab.Dims) != 1 {
		return nil, fmt.Errorf("read %s: %w", labelPath, formatErr("label file has rank %d, expected 1", len(lab.Dims)))
	}
	n := img.Dims[0]
	if lab.Dims[0] != n {
		return nil, fmt.Errorf("read %s and %s: image count %d, label count %d: %w", imagePath, labelPath, n, lab.Dims[0], ErrFormat)
	}
	if n == 0 {
		return nil, fmt.Errorf("read %s: %w", imagePath, formatErr("no images"))
	}
	d := &Dataset{N: n, D: len(img.Data) / n, Classes: classes, Image: append([]int(nil), img.Dims[1:]...)}
	d.X = make([]float32, len(img.Data))
	for i, v := range img.Data {
		d.X[i] = float32(v / 255)
	}
	d.Labels = make([]int, n)
	for i, v := range lab.Data {
		if v < 0 || v >= float64(classes) || v != math.Trunc(v) {
			return nil, fmt.Errorf("read %s: %w", labelPath, formatErr("label %v of example %d outside [0, %d)", v, i, classes))
		}
		d.Labels[i] = int(v)
	}
	return d, nil
}

// WriteImages writes d (classification, pixels in [0,1]) as an IDX image file
// with rows*cols pixels per image and an IDX label file. It is the inverse of
// LoadImages up to the 8-bit quantisation of pixels.
func WriteImages(d *Dataset, rows, cols int, imagePath, labelPath string, gz bool) error {
	if d.Classes == 0 {
		return errors.New("write images: dataset has no class labels")
	}
	if rows*cols != d.D {
		return fmt.Errorf("write images: %dx%d pixels, dataset has %d features", rows, cols, d.D)
	}
	img := &IDX{Type: IDXUint8, Dims: []int{d.N, rows, cols}, Data: make([]float64, len(d.X))}
	for i, v := range d.X {
		img.Data[i] = math.Round(float64(v) * 255)
	}
	lab := &IDX{Type: IDXUint8, Dims: []int{d.N}, Data: make([]float64, d.N)}
	for i, l := range d.Labels {
		lab.Data[i] = float64(l)
	}
	if err := WriteIDXFile(imagePath, img, gz); err != nil {
		return err
	}
	return WriteIDXFile(labelPath, lab, gz)
}

// Unlabelled returns the images of img (rank at least 2: count, rows[,
// cols]; at least one image) as a data set without labels: images to
// predict or score as out-of-distribution. Unsigned bytes are divided by
// 255 as LoadImages scales them; floats (IDXFloat32, IDXFloat64) are
// pixels already, kept as they are, as serve keeps them; other element
// types are refused.
func Unlabelled(img *IDX) (*Dataset, error) {
	if len(img.Dims) < 2 || img.Dims[0] == 0 {
		return nil, formatErr("image file has dimensions %v, expected count, rows[, cols]", img.Dims)
	}
	div := 1.0 // v/255 exactly as LoadImages divides, not v times 1/255 (which rounds otherwise)
	switch img.Type {
	case IDXUint8:
		div = 255
	case IDXFloat32, IDXFloat64:
	default:
		return nil, formatErr("image element type 0x%02x, expected unsigned bytes (0x08, scaled by 1/255) or floats in [0, 1] (0x0D, 0x0E)", img.Type)
	}
	n := img.Dims[0]
	d := &Dataset{N: n, D: len(img.Data) / n, X: make([]float32, len(img.Data)), Image: append([]int(nil), img.Dims[1:]...)}
	for i, v := range img.Data {
		d.X[i] = float32(v / div)
	}
	return d, nil
}

// TestImagesIn returns the test image file of the data directory dir
// (TestImages, or TestImages.gz), or an error naming both.
func TestImagesIn(dir string) (string, error) {
	for _, n := range []string{TestImages, TestImages + ".gz"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n), nil
		}
	}
	return "", fmt.Errorf("the directory holds neither %s nor %s.gz", TestImages, TestImages)
}
