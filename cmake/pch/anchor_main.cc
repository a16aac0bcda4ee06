// The one source of the target that compiles the tests' precompiled header
// (an executable, so that it is compiled with the tests' flags).
int main() { return 0; }
