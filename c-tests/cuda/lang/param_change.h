// A local header, found beside the .cu file (quoted include): the tile of param_change.cu.
#define PC_BLOCK 64
