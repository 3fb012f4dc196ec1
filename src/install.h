/*
 * rearguard install DIR: copies the running binary to DIR/rearguard, so
 * that an init container can hand it to app images that lack it:
 *
 *	initContainers: [{name: rearguard, image: rearguard, args: [install, /rearguard]}]
 *	containers:     [{name: app, command: [/rearguard/rearguard, run, --, /app/job]}]
 */
#ifndef RG_INSTALL_H
#define RG_INSTALL_H

#include <stddef.h>

#define INSTALL_NAME "rearguard"

/* Writes DIR/rearguard atomically, mode 0755; stores its size. 0 or -errno. */
int install_binary(const char *dir, size_t *size);

#endif
