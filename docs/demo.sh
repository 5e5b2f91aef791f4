#!/bin/sh
# What a newcomer sees first: skel's view of a bundled sample.
set -e
cd "$(dirname "$0")/.."
app=build/samples/matmul-O2-pie
echo "\$ ./skel loops $app matmul"
./skel loops "$app" matmul
echo
echo "\$ ./skel summary $app"
./skel summary "$app"
