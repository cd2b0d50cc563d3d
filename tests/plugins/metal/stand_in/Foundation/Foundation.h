// A stand-in for a syntax check of plugins/metal/device.mm on Linux (metal_device_syntax_test),
// written from Apple's documented API: only what device.mm uses. Not Apple's header.
#pragma once
#include <stddef.h>
#define TARGET_OS_OSX 1
#define nil ((id)0)
typedef unsigned long NSUInteger;
typedef signed char BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)
@protocol NSObject
@end
__attribute__((objc_root_class))
@interface NSObject<NSObject>
+ (instancetype _Nonnull)new;
@end
@interface NSString : NSObject
+ (instancetype)stringWithUTF8String:(const char*)s;
@property(readonly) const char* UTF8String;
@end
@interface NSError : NSObject
@property(readonly, copy) NSString* localizedDescription;
@end
@interface NSArray<ObjectType> : NSObject
+ (instancetype)arrayWithObjects:(const ObjectType _Nonnull[_Nullable])objects count:(NSUInteger)cnt;
@property(readonly) NSUInteger count;
- (ObjectType _Nonnull)objectAtIndexedSubscript:(NSUInteger)idx;
@end
