// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {FHE, euint32, externalEuint32} from "@fhevm/solidity/lib/FHE.sol";
import {ZamaEthereumConfig} from "@fhevm/solidity/config/ZamaConfig.sol";

/**
 * @title EncryptedCounter
 * @notice A counter kept encrypted: anyone adds an encrypted amount (an input with its proof), and whoever added
 *         to it may decrypt the total (user decryption). `publish` makes the total publicly decryptable, for
 *         `CountReveal` to record it on chain with the KMS's proof.
 */
contract EncryptedCounter is ZamaEthereumConfig {
    euint32 private _count;

    event Added(address indexed by, euint32 count);
    event Published(euint32 count);

    function count() external view returns (euint32) {
        return _count;
    }

    function add(externalEuint32 amount, bytes calldata inputProof) external {
        _count = FHE.add(_count, FHE.fromExternal(amount, inputProof));
        FHE.allowThis(_count);
        FHE.allow(_count, msg.sender);
        emit Added(msg.sender, _count);
    }

    function publish() external {
        FHE.makePubliclyDecryptable(_count);
        emit Published(_count);
    }
}
