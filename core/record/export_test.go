package record

// Every Diff in the package's tests checks at each pass it holds that the
// holdings it keeps up to date, change by change, are what the slots hold.
func init() { checkHoldings = true }
