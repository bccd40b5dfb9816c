#include "cli/cli.hpp"

int main(int argc, char** argv) { return ioacct::run_cli(argc, argv); }
