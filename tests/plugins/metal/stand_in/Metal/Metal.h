// A stand-in for a syntax check of plugins/metal/device.mm on Linux (metal_device_syntax_test),
// written from Apple's documented API: only what device.mm uses. Not Apple's header.
#pragma once
#import <Foundation/Foundation.h>
typedef double CFTimeInterval;
typedef struct {
  NSUInteger width, height, depth;
} MTLSize;
static inline MTLSize MTLSizeMake(NSUInteger w, NSUInteger h, NSUInteger d) {
  MTLSize s = {w, h, d};
  return s;
}
typedef enum { MTLResourceStorageModeShared = 0 } MTLResourceOptions;
typedef enum { MTLCommandBufferStatusCompleted = 4, MTLCommandBufferStatusError = 5 } MTLCommandBufferStatus;
@interface MTLCompileOptions : NSObject
@property BOOL fastMathEnabled;
@end
@protocol MTLBuffer <NSObject>
@property(readonly) void* contents;
@end
@protocol MTLFunction <NSObject>
@end
@protocol MTLLibrary <NSObject>
- (id<MTLFunction>)newFunctionWithName:(NSString*)name;
@end
@protocol MTLComputePipelineState <NSObject>
@property(readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@end
@protocol MTLComputeCommandEncoder <NSObject>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)groups threadsPerThreadgroup:(MTLSize)threads;
- (void)endEncoding;
@end
@protocol MTLCommandBuffer <NSObject>
- (id<MTLComputeCommandEncoder>)computeCommandEncoder;
- (void)commit;
- (void)waitUntilCompleted;
@property(readonly) MTLCommandBufferStatus status;
@property(readonly) NSError* error;
@property(readonly) CFTimeInterval GPUStartTime;
@property(readonly) CFTimeInterval GPUEndTime;
@end
@protocol MTLCommandQueue <NSObject>
- (id<MTLCommandBuffer>)commandBuffer;
@end
@protocol MTLDevice <NSObject>
@property(readonly) NSString* name;
@property(readonly) unsigned long long recommendedMaxWorkingSetSize;
@property(readonly) NSUInteger maxBufferLength;
@property(readonly) NSUInteger maxThreadgroupMemoryLength;
@property(readonly) MTLSize maxThreadsPerThreadgroup;
- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (id<MTLLibrary>)newLibraryWithSource:(NSString*)source
                               options:(MTLCompileOptions*)options
                                 error:(NSError**)error;
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)f error:(NSError**)error;
- (id<MTLCommandQueue>)newCommandQueue;
@end
NSArray<id<MTLDevice>>* MTLCopyAllDevices(void);
id<MTLDevice> MTLCreateSystemDefaultDevice(void);
