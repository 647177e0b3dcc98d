// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {FHE, ebool, euint64} from "@fhevm/solidity/lib/FHE.sol";
import {ZamaEthereumConfig} from "@fhevm/solidity/config/ZamaConfig.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC7984} from "@openzeppelin/confidential-contracts/interfaces/IERC7984.sol";
import {IERC7984Receiver} from "@openzeppelin/confidential-contracts/interfaces/IERC7984Receiver.sol";

/**
 * @title LetterVault
 * @notice Escrow of letters of value. Each letter keeps its own encrypted amount: the handle that the token
 *         actually moved into the vault (an encrypted zero when the sender's balance was short, since ERC-7984
 *         transfers do not revert). Only the owner (the service operator) releases a letter to its claimant or
 *         refunds it to its sender, and each letter leaves the vault at most once.
 *
 * Escrow: the sender calls `token.confidentialTransferAndCall(vault, encryptedAmount, inputProof, abi.encode(letterId))`.
 * The token moves the amount and calls {onConfidentialTransferReceived} with the transferred handle, which the vault
 * records for the letter. ACL: the handle stays readable by the token, the vault, the sender (granted by the token)
 * and the owner (granted here), so the operator can user-decrypt every amount it escrowed, released or refunded.
 */
contract LetterVault is ZamaEthereumConfig, Ownable, IERC7984Receiver {
    enum State {
        None,
        Escrowed,
        Released,
        Refunded
    }

    struct Letter {
        address sender;
        State state;
        euint64 amount;
    }

    IERC7984 public immutable token;
    mapping(bytes32 letterId => Letter) private _letters;

    /// @dev `amount` is the handle the token transferred in; decrypt it to verify the escrow.
    event LetterEscrowed(bytes32 indexed letterId, address indexed sender, euint64 amount);
    /// @dev `amount` is the handle the token transferred out to `to` (the claimant).
    event LetterReleased(bytes32 indexed letterId, address indexed to, euint64 amount);
    /// @dev `amount` is the handle the token transferred back to the letter's sender.
    event LetterRefunded(bytes32 indexed letterId, address indexed sender, euint64 amount);

    error UnauthorizedToken(address caller);
    error InvalidLetterId();
    error LetterExists(bytes32 letterId);
    error LetterNotEscrowed(bytes32 letterId, State state);
    error InvalidRecipient();

    constructor(IERC7984 token_, address initialOwner) Ownable(initialOwner) {
        token = token_;
    }

    /// @notice ERC-7984 transfer-and-call hook: records the transferred amount for the letter named in `data`.
    function onConfidentialTransferReceived(
        address /* operator */,
        address from,
        euint64 amount,
        bytes calldata data
    ) external returns (ebool) {
        if (msg.sender != address(token)) revert UnauthorizedToken(msg.sender);
        if (data.length != 32) revert InvalidLetterId();
        bytes32 letterId = abi.decode(data, (bytes32));
        if (letterId == bytes32(0)) revert InvalidLetterId();
        Letter storage letter = _letters[letterId];
        if (letter.state != State.None) revert LetterExists(letterId);

        letter.sender = from;
        letter.state = State.Escrowed;
        letter.amount = amount;
        FHE.allowThis(amount);
        FHE.allow(amount, owner());
        emit LetterEscrowed(letterId, from, amount);

        ebool accepted = FHE.asEbool(true);
        FHE.allowTransient(accepted, msg.sender);
        return accepted;
    }

    /// @notice Sends exactly the letter's escrowed amount to `to` (the claim). Owner only, once per letter.
    function release(bytes32 letterId, address to) external onlyOwner returns (euint64 transferred) {
        if (to == address(0)) revert InvalidRecipient();
        Letter storage letter = _letters[letterId];
        if (letter.state != State.Escrowed) revert LetterNotEscrowed(letterId, letter.state);
        letter.state = State.Released;
        transferred = _send(letter.amount, to);
        emit LetterReleased(letterId, to, transferred);
    }

    /// @notice Sends the letter's escrowed amount back to the address that escrowed it. Owner only, once per letter.
    function refund(bytes32 letterId) external onlyOwner returns (euint64 transferred) {
        Letter storage letter = _letters[letterId];
        if (letter.state != State.Escrowed) revert LetterNotEscrowed(letterId, letter.state);
        letter.state = State.Refunded;
        transferred = _send(letter.amount, letter.sender);
        emit LetterRefunded(letterId, letter.sender, transferred);
    }

    /// @notice The letter's sender, state and encrypted amount (the zero handle when unknown).
    function letterOf(bytes32 letterId) external view returns (address sender, State state, euint64 amount) {
        Letter storage letter = _letters[letterId];
        return (letter.sender, letter.state, letter.amount);
    }

    function _send(euint64 amount, address to) private returns (euint64 transferred) {
        FHE.allowTransient(amount, address(token));
        transferred = token.confidentialTransfer(to, amount);
        FHE.allowThis(transferred);
        FHE.allow(transferred, owner());
    }
}
