/*
 * Nothing but a program to link: each tests/build/link-LIB is this with
 * every member of one library forced in (--whole-archive) and only the
 * libraries that library says it stands on after it (Makefile.am). A member
 * that reaches past them leaves a symbol undefined, and the build fails.
 */
int main(void)
{
	return 0;
}
