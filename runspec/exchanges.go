package runspec

import "github.com/ptsghmc/ptsghmc/tempering"

// ExchangeRule is an exchange test a run can name in Config.XTest: the
// decision whether two rungs of a PT run swap their configurations.
type ExchangeRule struct {
	Name string // what Config.XTest says
	Doc  string // one line for help texts
	// New returns the test for a run of cfg (its XBatch, and the rule's
	// own settings).
	New func(cfg Config) (tempering.ExchangeTest, error)
}

// Exchange rule names of DefaultExchanges.
const (
	// XTestBarker is the corrected minibatch Barker test (Seita et al.
	// 2017), exact up to its correction table; "" means it too.
	XTestBarker = "barker"
	// XTestResghmc is reSGHMC's bias-corrected Metropolis swap (Deng et
	// al. 2020), approximate.
	XTestResghmc = "resghmc"
)

// DefaultExchanges returns the exchange rules a run can name when its
// Setup gives none: barker and resghmc. Each call returns a new slice, so
// a caller may extend it (append its own rules) and pass the result in
// Setup.Exchanges without changing what other runs see.
func DefaultExchanges() []ExchangeRule {
	return []ExchangeRule{
		{Name: XTestBarker, Doc: "the corrected minibatch Barker test (exact up to its correction table)",
			New: func(cfg Config) (tempering.ExchangeTest, error) {
				corr, err := tempering.NewCorrection(1, tempering.CorrectionOptions{Method: tempering.CorrectionMethod(cfg.Corr)})
				if err != nil {
					return nil, err
				}
				return &tempering.Exchanger{Batch: cfg.XBatch, Correction: corr, Margin: cfg.XMargin, Tolerance: cfg.XTolerance}, nil
			}},
		{Name: XTestResghmc, Doc: "reSGHMC's approximate bias-corrected Metropolis swap on one minibatch",
			New: func(cfg Config) (tempering.ExchangeTest, error) {
				return &tempering.BiasCorrectedExchange{Batch: cfg.XBatch, F: cfg.XF}, nil
			}},
	}
}

// LookupExchange returns the rule of rules named name ("" is barker).
func LookupExchange(rules []ExchangeRule, name string) (ExchangeRule, bool) {
	if name == "" {
		name = XTestBarker
	}
	for _, r := range rules {
		if r.Name == name {
			return r, true
		}
	}
	return ExchangeRule{}, false
}

// ExchangeNames returns the names of rules.
func ExchangeNames(rules []ExchangeRule) []string {
	var names []string
	for _, r := range rules {
		names = append(names, r.Name)
	}
	return names
}
