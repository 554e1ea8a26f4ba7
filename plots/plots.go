package plots

import (
	"bytes"
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure is one rendered figure: its file name, a title that says what it
// shows, and its PNG bytes.
type Figure struct {
	Name, Title string
	PNG         []byte
}

// AddLine adds a line named name through xy to p in the i-th colour and
// dash pattern of plotutil's palettes (separate plotutil.AddLines calls
// would all get the first).
func AddLine(p *plot.Plot, name string, xy plotter.XYs, i int) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// panelWidth and panelHeight are the size of one panel of a row.
const panelWidth, panelHeight = 5 * vg.Inch, 4 * vg.Inch

// RowPNG draws plots side by side, each 5 by 4 inches, in one PNG.
func RowPNG(ps ...*plot.Plot) ([]byte, error) {
	img := vgimg.New(panelWidth*vg.Length(len(ps)), panelHeight)
	for i, p := range ps {
		x0 := vg.Length(i) * panelWidth
		p.Draw(draw.Canvas{Canvas: img, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: 0}, Max: vg.Point{X: x0 + panelWidth, Y: panelHeight}}})
	}
	return pngBytes(img)
}

// pngBytes encodes a canvas as PNG.
func pngBytes(c *vgimg.Canvas) ([]byte, error) {
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	return b.Bytes(), nil
}

// SaveRow saves plots side by side in one PNG file (RowPNG).
func SaveRow(path string, ps ...*plot.Plot) error {
	b, err := RowPNG(ps...)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
