# RG_CHECK_CFLAG(VARIABLE, FLAG)
# Appends FLAG to VARIABLE when the C compiler accepts it without a warning.
AC_DEFUN([RG_CHECK_CFLAG], [
	AC_MSG_CHECKING([whether $CC accepts $2])
	rg_check_cflag_save=$CFLAGS
	CFLAGS="$CFLAGS -Werror $2"
	AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[]], [[]])],
		[AC_MSG_RESULT([yes]); $1="${$1:+$$1 }$2"],
		[AC_MSG_RESULT([no])])
	CFLAGS=$rg_check_cflag_save
])
