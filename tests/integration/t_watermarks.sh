# t_watermarks.sh: memory.high_watermark_in_bytes / low_watermark (the
# memcgfs extension): rules, defaults, clamping, delegation with ACLs, and
# background reclaim seen through the mount.
. "$(dirname "$0")/lib.sh"
ensure_users
U=$TEST_USER
CTL="$MEMCGFS_BUILD/memcgctl"
H=memory.high_watermark_in_bytes
L=memory.low_watermark_in_bytes
mount_fs
A="$MNT/a"
mkdir "$A"

expect "modes" "$(stat -c '%a' "$A/$H" "$A/$L" "$MNT/$H" | tr '\n' ' ')" "644 644 644 "
expect "root reads unlimited" "$(cat "$MNT/$H")" "$UNLIMITED"
expect_wr "root refuses" EINVAL "$MNT/$H" "-1"
expect "no limit: unlimited" "$(cat "$A/$H")/$(cat "$A/$L")" "$UNLIMITED/$UNLIMITED"
echo 800M > "$A/memory.limit_in_bytes"
expect "automatic high (limit - limit/64)" "$(cat "$A/$H")" "825753600"
expect "automatic low (limit - limit/16)" "$(cat "$A/$L")" "786432000"
expect_wr "high above the limit" EINVAL "$A/$H" "801M"
expect_wr "high 790M" OK "$A/$H" "790M"
expect_wr "low above explicit high" EINVAL "$A/$L" "791M"
expect_wr "low 760M" OK "$A/$L" "760M"
expect "both" "$(cat "$A/$H") $(cat "$A/$L")" "828375040 796917760"
expect_wr "high below explicit low" EINVAL "$A/$H" "700M"
expect "failed write changed nothing" "$(cat "$A/$H")" "828375040"
expect_wr "-1: automatic again" OK "$A/$H" "-1"
expect "automatic high back" "$(cat "$A/$H")" "825753600"
echo 300M > "$A/$L"
echo 700M > "$A/$H"
echo 500M > "$A/memory.limit_in_bytes"
expect "limit write clamps high" "$(cat "$A/$H")" "524288000"
expect "low untouched below it" "$(cat "$A/$L")" "314572800"
expect "limit write succeeded" "$(cat "$A/memory.limit_in_bytes")" "524288000"

# delegation: root keeps the limit, a user tunes the watermarks
setfacl -m "u:$U:rw" "$A/$H" "$A/$L"
expect "user sets high" "$(as_user "$U" "$WR" "$A/$H" 400M)" "OK"
expect "user sets low" "$(as_user "$U" "$WR" "$A/$L" 200M)" "OK"
expect "user cannot touch the limit" "$(as_user "$U" "$WR" "$A/memory.limit_in_bytes" 1G)" "EACCES"
echo 100M > "$A/memory.limit_in_bytes"
expect "the administrator's cut wins" "$(cat "$A/$H") $(cat "$A/$L")" "104857600 104857600"
setfacl -x "u:$U" "$A/$H"
expect "revoked" "$(as_user "$U" "$WR" "$A/$H" 50M)" "EACCES"
setfacl -d -m "u:$U:rwx" "$A"
mkdir "$A/kid"
echo 64M > "$A/kid/memory.limit_in_bytes"
expect "default ACL delegates the new child's watermarks" \
	"$(as_user "$U" "$WR" "$A/kid/$H" 32M) $(as_user "$U" "$WR" "$A/kid/$L" 16M)" "OK OK"

# background reclaim: page cache above the high watermark goes back down
mkdir "$MNT/bg"
echo 64M > "$MNT/bg/memory.limit_in_bytes"
echo 40M > "$MNT/bg/$H"
echo 20M > "$MNT/bg/$L"
"$CTL" sim -m "$MNT" -g /bg -e 'file data 48M' -e 'map data m' -e 'touch m seq'
expect "the task ran" "$?" "0"
wait_until 5 sh -c "[ \$(cat '$MNT/bg/memory.usage_in_bytes') -le $((40 << 20)) ]" && ok || bad "usage stayed above high"
st() { grep "^$1 " "$MNT/bg/memory.stat" | cut -d' ' -f2; }
[ "$(st kswapd_steal)" -gt 0 ] && ok || bad "no background reclaim counted"
[ "$(st pgoutrun)" -gt 0 ] && ok || bad "no background runs counted"
expect "no failcnt" "$(cat "$MNT/bg/memory.failcnt")" "0"
expect "no allocstall" "$(st allocstall)" "0"
umount_fs

# -o nowatermarks: no extension files, no extension keys
mount_fs nowatermarks
mkdir "$MNT/a"
expect "files hidden" "$(ls "$MNT/a" | grep -c watermark)" "0"
expect "kernel keys only" "$(wc -l < "$MNT/a/memory.stat")" "42"
summary
