"""`python -m sluice ARGS` runs the `sluice` command of the installed
package (as the console script does)."""

from sluice._command import main

main()
