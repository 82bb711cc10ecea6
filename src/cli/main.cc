// SPDX-License-Identifier: GPL-2.0-only
/*
 * The schedlab program: the command line is cli_main() (cli_main.cc, in the cli library).
 */
#include "cli/cli_main.h"

int main(int argc, char** argv)
{
    return schedlab::cli_main(argc, argv);
}
