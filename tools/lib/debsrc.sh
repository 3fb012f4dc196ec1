# shellcheck shell=bash
# Debian source packages through a private apt configuration: a deb-src twin
# of the system's own Debian entries, in a directory of its own, so that the
# system's apt setup stays untouched. Sourced by container/build-static.sh
# and tools/cluster, which define log and die.
#
#   debsrc_init DIR      the private apt directory is DIR/apt; its index is
#                        refreshed when older than a day
#   debsrc_fetch PACKAGE unpacks Debian's source package (with Debian's
#                        patches) into DIR/src/PACKAGE-VERSION, once, and
#                        prints that directory

debsrc_entries() {
	local codename f
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell the Debian release from /etc/os-release"
	# One-line format: the deb lines of this release's suites, as deb-src.
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v cn="$codename" '$1 == "deb" {
			for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i ~ /:\/\//) break
			if ($(i + 1) ~ "^" cn "(-updates|-security)?$") { $1 = "deb-src"; print }
		}' "$f" >>"$debsrc_apt/sources.list.d/debian-src.list"
	done
	# deb822 format: stanzas of type deb whose suites all belong to this release.
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v cn="$codename" '
			function flush() { if (deb && ours && n) { for (i = 1; i <= n; i++) print buf[i]; print "" }
				n = 0; deb = 0; ours = 1 }
			BEGIN { ours = 1 }
			/^[ \t]*$/ { flush(); next }
			{ line = $0 }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1; line = "Types: deb-src" }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i !~ "^" cn "(-updates|-security)?$") ours = 0 }
			{ buf[++n] = line }
			END { flush() }' "$f" >>"$debsrc_apt/sources.list.d/debian-src.sources"
	done
	[ -s "$debsrc_apt/sources.list.d/debian-src.list" ] || [ -s "$debsrc_apt/sources.list.d/debian-src.sources" ] ||
		die "no Debian $codename entries in /etc/apt to fetch source packages from"
}

debsrc_init() {
	debsrc_dir=$1
	debsrc_apt=$debsrc_dir/apt
	debsrc_opts=(-o "Dir::Etc::SourceList=$debsrc_apt/sources.list"
		-o "Dir::Etc::SourceParts=$debsrc_apt/sources.list.d"
		-o "Dir::State::Lists=$debsrc_apt/lists" -o "Dir::Cache=$debsrc_apt/cache"
		-o "APT::Sandbox::User=root" -o "Debug::NoLocking=true")
	if [ ! -d "$debsrc_apt/lists" ] ||
		[ -z "$(find "$debsrc_apt/lists" -maxdepth 1 -name '*Sources*' -mmin -1440)" ]; then
		rm -rf "$debsrc_apt"
		mkdir -p "$debsrc_apt/sources.list.d" "$debsrc_apt/lists/partial" "$debsrc_apt/cache/archives/partial"
		: >"$debsrc_apt/sources.list"
		debsrc_entries
		log "updating the source package index (private to $debsrc_apt)"
		apt-get "${debsrc_opts[@]}" -qq update >/dev/null || die "apt-get update of the deb-src entries failed"
	fi
}

# debsrc_version PACKAGE: the source package's name-version, as its .dsc is named.
debsrc_version() {
	local ver
	ver=$(apt-get "${debsrc_opts[@]}" -qq source --print-uris "$1" 2>/dev/null |
		awk '/\.dsc/ { gsub(/\x27/, "", $2); print $2; exit }')
	[ -n "$ver" ] || die "no source package $1 (apt-get source --print-uris found nothing)"
	echo "${ver%.dsc}"
}

debsrc_fetch() {
	local pkg=$1 ver dir
	ver=$(debsrc_version "$pkg")
	dir=$debsrc_dir/src/$ver
	if [ ! -f "$dir/.unpacked" ]; then
		log "fetching the source package $ver"
		rm -rf "$dir" "$debsrc_dir/dl" && mkdir -p "$debsrc_dir/dl" "$debsrc_dir/src"
		(cd "$debsrc_dir/dl" && apt-get "${debsrc_opts[@]}" -qq source --download-only "$pkg" >/dev/null) ||
			die "apt-get source $pkg failed"
		dpkg-source --no-check -x "$debsrc_dir/dl/$ver.dsc" "$dir" >/dev/null || die "cannot unpack $ver"
		rm -rf "$debsrc_dir/dl"
		touch "$dir/.unpacked"
	fi
	echo "$dir"
}
