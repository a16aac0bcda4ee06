# cmake -DFILE=x_pb2.py -P rewrite_proto_imports.cmake
# protoc writes imports of sibling protos by their import path
# ("from proto import metric_options_pb2"); inside the package they are
# "from sluice.proto import metric_options_pb2".
file(READ "${FILE}" text)
string(REGEX REPLACE "(^|\n)from proto import " "\\1from sluice.proto import "
       text "${text}")
file(WRITE "${FILE}" "${text}")
