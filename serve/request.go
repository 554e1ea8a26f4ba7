package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/ptsghmc/ptsghmc/datasets"
)

// predictRequest is /v1/predict's JSON body.
type predictRequest struct {
	Images [][]float64 `json:"images"`
}

// readImages reads a /v1/predict body into n images, row-major, checked
// against the limits and the model's input size; a refusal comes with its
// HTTP status.
func (s *Server) readImages(w http.ResponseWriter, r *http.Request) (x []float32, n, status int, err error) {
	kind := "application/json"
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, perr := mime.ParseMediaType(ct)
		if perr != nil {
			return nil, 0, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Type %q: %v (send application/json or application/octet-stream)", ct, perr)
		}
		kind = mt
	}
	if kind != "application/json" && kind != "application/octet-stream" {
		return nil, 0, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Type %s: send application/json ({\"images\": [[...], ...]}) or application/octet-stream (an IDX image file); curl needs -H 'Content-Type: application/json'", kind)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.limits.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, 0, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over the limit of %d bytes (at most %d images a request)", s.limits.MaxBody, s.limits.MaxImages)
	}
	if err != nil {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("read the request body: %v", err)
	}
	if kind == "application/octet-stream" {
		return s.idxImages(body)
	}
	return s.jsonImages(body)
}

// jsonImages decodes {"images": [[...], ...]}.
func (s *Server) jsonImages(body []byte) ([]float32, int, int, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req predictRequest
	if err := dec.Decode(&req); err != nil {
		return nil, 0, http.StatusBadRequest, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("malformed JSON: data after the request object at byte %d", dec.InputOffset())
	}
	n := len(req.Images)
	if err := s.checkCount(n, req.Images == nil); err != nil {
		return nil, 0, statusOf(err), err
	}
	d := s.post.Model.Inputs
	x := make([]float32, 0, n*d)
	for i, im := range req.Images {
		if len(im) != d {
			return nil, 0, http.StatusBadRequest, fmt.Errorf("image %d has %d values, the model %s takes %d (a flat array of pixel values in [0, 1])", i, len(im), s.post.Model.Name, d)
		}
		for j, v := range im {
			if !(v >= 0 && v <= 1) {
				return nil, 0, http.StatusBadRequest, fmt.Errorf("image %d, value %d: %v is outside [0, 1] (pixel values scaled to [0, 1], as the training images were)", i, j, v)
			}
			x = append(x, float32(v))
		}
	}
	return x, n, http.StatusOK, nil
}

// jsonError names what was wrong with a JSON body.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("empty body: send {\"images\": [[...], ...]}")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed JSON: the body ends inside the object")
	case errors.As(err, &syn):
		return fmt.Errorf("malformed JSON at byte %d: %v (NaN and infinities are not JSON numbers)", syn.Offset, syn)
	case errors.As(err, &typ):
		where := typ.Field
		if where == "" {
			where = "the body"
		}
		return fmt.Errorf("malformed request: %s holds a JSON %s at byte %d where %s was expected (send {\"images\": [[numbers in [0, 1]], ...]})", where, typ.Value, typ.Offset, typ.Type)
	}
	return fmt.Errorf("malformed request: %v", err)
}

// countError is a refusal of the number of images.
type countError struct {
	status int
	msg    string
}

func (e *countError) Error() string { return e.msg }

func statusOf(err error) int {
	var ce *countError
	if errors.As(err, &ce) {
		return ce.status
	}
	return http.StatusBadRequest
}

// checkCount refuses an empty batch (missing: no images field at all)
// and one over the limit.
func (s *Server) checkCount(n int, missing bool) error {
	switch {
	case missing:
		return &countError{http.StatusBadRequest, "no \"images\" field: send {\"images\": [[...], ...]}"}
	case n == 0:
		return &countError{http.StatusBadRequest, "empty batch: \"images\" holds no image"}
	case n > s.limits.MaxImages:
		return &countError{http.StatusRequestEntityTooLarge, fmt.Sprintf("%d images: at most %d a request", n, s.limits.MaxImages)}
	}
	return nil
}

// idxImages decodes the bytes of an IDX image file (count, rows[, cols]):
// unsigned bytes are scaled by 1/255, floats kept (they must be in [0, 1]).
func (s *Server) idxImages(body []byte) ([]float32, int, int, error) {
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		return nil, 0, http.StatusBadRequest, errors.New("gzip-compressed IDX: send the file's bytes uncompressed")
	}
	a, err := datasets.ReadIDX(bytes.NewReader(body))
	if err != nil {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("malformed IDX image file: %v", err)
	}
	size := map[byte]int{datasets.IDXUint8: 1, datasets.IDXFloat32: 4, datasets.IDXFloat64: 8}[a.Type]
	if size == 0 {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("IDX elements of type 0x%02x: send unsigned bytes (0x08, scaled by 1/255) or floats in [0, 1] (0x0D, 0x0E)", a.Type)
	}
	if len(a.Dims) < 2 {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("IDX of dimensions %v: expected images (count, rows[, cols])", a.Dims)
	}
	n := a.Dims[0]
	if n == 0 {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("empty batch: the IDX of dimensions %v declares 0 images", a.Dims)
	}
	if err := s.checkCount(n, false); err != nil {
		return nil, 0, statusOf(err), err
	}
	d := len(a.Data) / n
	if d != s.post.Model.Inputs {
		return nil, 0, http.StatusBadRequest, fmt.Errorf("IDX images of dimensions %v hold %d values each, the model %s takes %d", a.Dims[1:], d, s.post.Model.Name, s.post.Model.Inputs)
	}
	x := make([]float32, len(a.Data))
	for i, v := range a.Data {
		if a.Type == datasets.IDXUint8 {
			v /= 255
		}
		if !(v >= 0 && v <= 1) {
			return nil, 0, http.StatusBadRequest, fmt.Errorf("image %d, value %d: %v is outside [0, 1]", i/d, i%d, v)
		}
		x[i] = float32(v)
	}
	return x, n, http.StatusOK, nil
}
