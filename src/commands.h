/*
 * The subcommands whose front-ends live beside main.c, over the libraries:
 * inject's (injectcmd.c: the inputs read, inject_buffer on each, the output
 * written whole) and explain's (explaincmd.c). main.c parses their options
 * (options.h) first; each returns the exit status.
 */
#ifndef RG_COMMANDS_H
#define RG_COMMANDS_H

#include "options.h"

int inject_main(struct inject_cli *cli);
int explain_main(struct explain_cli *cli);

#endif
