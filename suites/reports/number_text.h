// Numbers of a report as people read them: ULP errors and bound fractions at
// reduced precision, never printed below what they are.
#ifndef ULPGATE_SUITES_REPORTS_NUMBER_TEXT_H_
#define ULPGATE_SUITES_REPORTS_NUMBER_TEXT_H_

#include <string>

namespace ulpgate {

// An error in ULPs, a bound fraction or any such measure, to 4 significant
// digits rounded away from zero: the decimal printed, read back as a double,
// is never below the value's magnitude, so a maximum of 0.5000090599 reads
// "0.5001", never "0.5", and a value that reads "0.5" is at most 0.5 (exactly
// 0.5 reads "0.5"). Fixed notation from 1e-3 to below 1e4 with trailing zeros
// dropped ("0.5", "1", "2.125"), else scientific ("1.678e+07", "3.052e-05");
// "0", "inf", "-inf" and "n/a" (NaN).
std::string FormatUlp(double value);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REPORTS_NUMBER_TEXT_H_
